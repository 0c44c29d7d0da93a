/**
 * The stages that bring another class's rows in: $lookup, $graphLookup and $unionWith. The joined class
 * must be readable, and its scope and field allowlist go in front of anything it contributes.
 */
import { AccessDeniedError, AgentValidationError } from '../../core/errors';
import { FieldTracker } from './field-tracker';
import { isObject, validateExpression, validateMatchQuery } from './pipeline-expressions';
import { Stage } from './pipeline-policy';
import { ShapeStages } from './pipeline-shape-stages';
import { positiveInteger } from './pipeline-walk-base';

/** The variable a rewritten localField/foreignField `$lookup` binds the local value to. */
export const LOOKUP_LOCAL_VARIABLE = 'pa_local';

export abstract class JoinStages extends ShapeStages {
  protected lookup(arg: unknown, fields: FieldTracker, depth: number): Record<string, unknown> {
    if (!isObject(arg) || typeof arg.as !== 'string') {
      throw new AgentValidationError(
        `'$lookup' needs 'from' and 'as', plus either 'localField'/'foreignField' or 'pipeline'.`,
      );
    }
    for (const key of Object.keys(arg)) {
      if (!['from', 'localField', 'foreignField', 'let', 'pipeline', 'as'].includes(key)) {
        throw new AgentValidationError(`'$lookup' does not take '${key}'.`);
      }
    }
    if (arg.from === undefined) {
      throw new AgentValidationError(`'$lookup' needs 'from': the Parse class to join.`);
    }
    const from = this.readClass(arg.from);
    const as = this.outputName('$lookup.as', arg.as, fields, false);
    const foreign = FieldTracker.forClass(from, this.policy.allowedFields(from));
    const hasLocal = arg.localField !== undefined || arg.foreignField !== undefined;
    if (hasLocal) {
      if (typeof arg.localField !== 'string' || typeof arg.foreignField !== 'string') {
        throw new AgentValidationError(
          `'$lookup' needs both 'localField' and 'foreignField' as strings.`,
        );
      }
      fields.assertReadable(arg.localField, false);
      foreign.assertReadable(arg.foreignField, false);
      this.assertPointerTarget(fields.className, arg.localField, arg.foreignField, from);
    }
    if (arg.let !== undefined) {
      if (!isObject(arg.let))
        throw new AgentValidationError(`'$lookup.let' takes { "name": <expression> }.`);
      for (const [name, value] of Object.entries(arg.let)) {
        if (!/^[a-z][A-Za-z0-9_]*$/.test(name) || name === LOOKUP_LOCAL_VARIABLE) {
          throw new AgentValidationError(
            `'$lookup.let' variable '${name}' must start with a lowercase letter (and '${LOOKUP_LOCAL_VARIABLE}' is reserved).`,
          );
        }
        validateExpression(value, fields, this.facts);
      }
    }
    if (arg.pipeline !== undefined && !Array.isArray(arg.pipeline)) {
      throw new AgentValidationError(`'$lookup.pipeline' must be an array of stages.`);
    }
    if (!hasLocal && arg.pipeline === undefined) {
      throw new AgentValidationError(
        `'$lookup' needs 'localField' + 'foreignField', or a 'pipeline' (with 'let' for join variables).`,
      );
    }
    const sub = arg.pipeline ? this.stages(arg.pipeline, foreign, depth + 1) : [];
    fields.produce(as);

    const scope = this.scopeStages(from);
    const projection = this.projectionStages(from);
    if (arg.pipeline === undefined) {
      const { localField, foreignField } = arg as { localField: string; foreignField: string };
      if (scope.length === 0 && projection.length === 0)
        return { from, localField, foreignField, as };
      // The equality form has nowhere to put a $match, so rewrite it as let + pipeline.
      const local = `$$${LOOKUP_LOCAL_VARIABLE}`;
      const join: Stage = {
        $match: {
          $expr: {
            $in: [`$${foreignField}`, { $cond: [{ $isArray: local }, local, [local]] }],
          },
        },
      };
      return {
        from,
        let: { [LOOKUP_LOCAL_VARIABLE]: `$${localField}` },
        pipeline: [...scope, join, ...projection],
        as,
      };
    }
    const out: Record<string, unknown> = { from };
    if (hasLocal) {
      out.localField = arg.localField;
      out.foreignField = arg.foreignField;
    }
    if (arg.let !== undefined) out.let = arg.let;
    out.pipeline = [...scope, ...projection, ...sub];
    out.as = as;
    return out;
  }

  protected assertPointerTarget(
    className: string,
    localField: string,
    foreignField: string,
    from: string,
  ): void {
    const target = this.policy.pointerTargets?.(className)[localField];
    if (target !== undefined && foreignField === 'objectId' && target !== from) {
      throw new AgentValidationError(
        `'${localField}' on ${className} points to ${target}, not ${from}. Use "from": "${target}".`,
      );
    }
  }

  protected graphLookup(arg: unknown, fields: FieldTracker): Record<string, unknown> {
    const required = ['from', 'startWith', 'connectFromField', 'connectToField', 'as'];
    if (!isObject(arg) || required.some((k) => !(k in arg))) {
      throw new AgentValidationError(`'$graphLookup' needs ${required.join(', ')}.`);
    }
    const known = [...required, 'maxDepth', 'depthField', 'restrictSearchWithMatch'];
    for (const key of Object.keys(arg)) {
      if (!known.includes(key))
        throw new AgentValidationError(`'$graphLookup' does not take '${key}'.`);
    }
    const from = this.readClass(arg.from);
    if (this.policy.scopeMatches(from).length > 0) {
      throw new AccessDeniedError(
        `'$graphLookup' cannot be used on ${from}: its rows are scoped for this agent (tenant or filter) ` +
          `and a recursive search cannot carry that scope. Use $lookup with a pipeline instead.`,
        { kind: 'tenant_scope' },
      );
    }
    if (this.policy.allowedFields(from)) {
      throw new AccessDeniedError(
        `'$graphLookup' returns whole ${from} documents, but ${from} has a field allowlist for this ` +
          `agent. Use $lookup with a pipeline instead.`,
        {
          kind: 'field_denied',
          allowedFields: [...(this.policy.allowedFields(from) ?? [])].slice(0, 20),
        },
      );
    }
    const foreign = FieldTracker.forClass(from, undefined);
    validateExpression(arg.startWith, fields, this.facts);
    for (const key of ['connectFromField', 'connectToField'] as const) {
      if (typeof arg[key] !== 'string')
        throw new AgentValidationError(`'$graphLookup.${key}' must be a string.`);
      foreign.assertReadable(arg[key] as string, false);
    }
    if (arg.restrictSearchWithMatch !== undefined) {
      validateMatchQuery(arg.restrictSearchWithMatch, foreign, this.facts);
    }
    if (arg.maxDepth !== undefined) positiveInteger('$graphLookup.maxDepth', arg.maxDepth, 0);
    if (arg.depthField !== undefined)
      this.outputName('$graphLookup.depthField', arg.depthField, foreign, false);
    fields.produce(this.outputName('$graphLookup.as', arg.as, fields, false));
    return arg;
  }

  protected unionWith(arg: unknown, fields: FieldTracker, depth: number): Record<string, unknown> {
    const spec = typeof arg === 'string' ? { coll: arg } : arg;
    if (!isObject(spec) || typeof spec.coll !== 'string') {
      throw new AgentValidationError(
        `'$unionWith' takes "ClassName" or { "coll": "ClassName", "pipeline": [...] }.`,
      );
    }
    for (const key of Object.keys(spec)) {
      if (key !== 'coll' && key !== 'pipeline')
        throw new AgentValidationError(`'$unionWith' does not take '${key}'.`);
    }
    const coll = this.readClass(spec.coll);
    if (spec.pipeline !== undefined && !Array.isArray(spec.pipeline)) {
      throw new AgentValidationError(`'$unionWith.pipeline' must be an array of stages.`);
    }
    const foreign = FieldTracker.forClass(coll, this.policy.allowedFields(coll));
    const sub = this.stages((spec.pipeline as unknown[] | undefined) ?? [], foreign, depth + 1);
    // Rows of the other class join the stream; only names its pipeline produced become referable.
    fields.produce(...foreign.producedNames());
    fields.mixRows();
    return { coll, pipeline: [...this.sourcePrefix(coll), ...sub] };
  }
}
