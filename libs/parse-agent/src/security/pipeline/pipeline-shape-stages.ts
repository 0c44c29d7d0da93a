/**
 * The stages that reshape or summarise the stream of one class's rows: $project, $addFields/$set,
 * $unset, $group and its accumulators, $sort, $unwind, $replaceRoot/$replaceWith, $facet, $bucket,
 * $bucketAuto and $setWindowFields. Each checks its argument and moves the tracked fields forward.
 */
import { AgentValidationError } from '../../core/errors';
import { FieldTracker, rootOf } from './field-tracker';
import { assertNotInternal } from './pipeline-field-rules';
import { assertNotBlocked, isObject, validateExpression } from './pipeline-expressions';
import { Pipeline } from './pipeline-policy';
import { PipelineWalkBase, positiveInteger } from './pipeline-walk-base';

const ACCUMULATORS = new Set([
  '$sum',
  '$avg',
  '$min',
  '$max',
  '$first',
  '$last',
  '$push',
  '$addToSet',
  '$count',
  '$stdDevPop',
  '$stdDevSamp',
  '$mergeObjects',
  '$top',
  '$bottom',
  '$topN',
  '$bottomN',
  '$firstN',
  '$lastN',
  '$maxN',
  '$minN',
  '$median',
  '$percentile',
]);

export abstract class ShapeStages extends PipelineWalkBase {
  protected project(arg: unknown, fields: FieldTracker): Record<string, unknown> {
    if (!isObject(arg) || Object.keys(arg).length === 0) {
      throw new AgentValidationError(
        `'$project' takes a non-empty object, e.g. { "title": 1, "total": { "$add": ["$a", "$b"] } }.`,
      );
    }
    const entries = flattenProjection(arg);
    let inclusion = false;
    let exclusion = false;
    let keepsId = true;
    const produced: string[] = [];
    const excluded: string[] = [];
    const origins = new Map<string, string>();
    for (const [path, value] of entries) {
      assertNotInternal(path);
      const isFlag = value === 0 || value === 1 || value === true || value === false;
      if (path === '_id' && (value === 0 || value === false)) {
        keepsId = false;
        continue;
      }
      if (isFlag && (value === 0 || value === false)) {
        exclusion = true;
        this.outputName('$project', path, fields, true);
        excluded.push(path);
        continue;
      }
      this.outputName('$project', path, fields, true);
      inclusion = true;
      if (isFlag) fields.assertReadable(path, false);
      else validateExpression(value, fields, this.facts);
      produced.push(path);
      const origin = isFlag ? fields.originOf(path) : fields.originOfExpression(value);
      if (origin !== undefined && !path.includes('.')) origins.set(path, origin);
    }
    if (inclusion && exclusion) {
      throw new AgentValidationError(
        `'$project' cannot mix inclusion (1 or expressions) and exclusion (0) except for "_id": 0. ` +
          `Use separate $project stages, or $unset for exclusions.`,
      );
    }
    if (exclusion || !inclusion) {
      fields.drop(...excluded);
      return arg;
    }
    if (keepsId) {
      if (fields.isProduced('_id')) produced.push('_id');
      if (fields.sourceOpen) produced.push('objectId');
      for (const name of ['_id', 'objectId']) {
        const origin = fields.originOf(name);
        if (origin !== undefined && !origins.has(name)) origins.set(name, origin);
      }
    }
    fields.replace(produced, origins);
    return arg;
  }

  protected addFields(stage: string, arg: unknown, fields: FieldTracker): Record<string, unknown> {
    if (!isObject(arg) || Object.keys(arg).length === 0) {
      throw new AgentValidationError(
        `'${stage}' takes a non-empty object of { "newField": <expression> }.`,
      );
    }
    const set: Array<[string, string | undefined]> = [];
    for (const [name, value] of Object.entries(arg)) {
      this.outputName(stage, name, fields, true);
      // `a.b: x` merges into an existing `a`: the agent must be allowed to read `a`.
      if (name.includes('.')) fields.assertReadable(name.split('.')[0], false);
      validateExpression(value, fields, this.facts);
      // Every expression reads the incoming document, so origins are taken before any is set.
      set.push([name, fields.originOfExpression(value)]);
    }
    for (const [name, origin] of set) fields.produceWithOrigin(name, origin);
    return arg;
  }

  protected unset(arg: unknown, fields: FieldTracker): string | string[] {
    const names = typeof arg === 'string' ? [arg] : arg;
    if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== 'string')) {
      throw new AgentValidationError(`'$unset' takes a field name or an array of field names.`);
    }
    for (const name of names as string[]) this.outputName('$unset', name, fields, true);
    fields.drop(...(names as string[]));
    return arg as string | string[];
  }

  protected accumulators(
    where: string,
    spec: Record<string, unknown>,
    fields: FieldTracker,
  ): string[] {
    const names: string[] = [];
    for (const [name, acc] of Object.entries(spec)) {
      this.outputName(where, name, fields, false);
      if (!isObject(acc) || Object.keys(acc).length !== 1) {
        throw new AgentValidationError(
          `${where}: '${name}' must be one accumulator, e.g. { "$sum": "$amount" }.`,
        );
      }
      const [op] = Object.keys(acc);
      assertNotBlocked(op);
      if (!ACCUMULATORS.has(op)) {
        throw new AgentValidationError(
          `${where}: unknown accumulator '${op}' for '${name}'. Use one of ${[...ACCUMULATORS].join(', ')}.`,
        );
      }
      validateExpression(acc[op], fields, this.facts);
      names.push(name);
    }
    return names;
  }

  protected group(arg: unknown, fields: FieldTracker): Record<string, unknown> {
    if (!isObject(arg) || !('_id' in arg)) {
      throw new AgentValidationError(
        `'$group' needs an '_id' (the grouping key, or null for one group), e.g. ` +
          `{ "_id": "$status", "n": { "$sum": 1 } }.`,
      );
    }
    validateExpression(arg._id, fields, this.facts);
    const { _id: _key, ...rest } = arg;
    const names = this.accumulators('$group', rest, fields);
    // A key on one column, and $first/$last/$min/$max of one, hold that column's values.
    const origins = new Map<string, string>();
    const keyOrigin = fields.originOfExpression(arg._id);
    if (keyOrigin !== undefined) origins.set('_id', keyOrigin);
    for (const [name, acc] of Object.entries(rest)) {
      const [op] = Object.keys(acc as Record<string, unknown>);
      if (!['$first', '$last', '$min', '$max'].includes(op)) continue;
      const origin = fields.originOfExpression((acc as Record<string, unknown>)[op]);
      if (origin !== undefined) origins.set(name, origin);
    }
    fields.replace(['_id', ...names], origins);
    return arg;
  }

  protected sort(arg: unknown, fields: FieldTracker): Record<string, unknown> {
    if (!isObject(arg) || Object.keys(arg).length === 0) {
      throw new AgentValidationError(`'$sort' takes { "field": 1 | -1, ... }.`);
    }
    for (const [path, dir] of Object.entries(arg)) {
      fields.assertReadable(path, false);
      if (dir !== 1 && dir !== -1) {
        throw new AgentValidationError(`'$sort' direction for '${path}' must be 1 or -1.`);
      }
    }
    return arg;
  }

  protected unwind(arg: unknown, fields: FieldTracker): unknown {
    const spec = typeof arg === 'string' ? { path: arg } : arg;
    if (!isObject(spec) || typeof spec.path !== 'string' || !spec.path.startsWith('$')) {
      throw new AgentValidationError(
        `'$unwind' takes "$arrayField" or { "path": "$arrayField", "includeArrayIndex"?: "name", ` +
          `"preserveNullAndEmptyArrays"?: true }.`,
      );
    }
    for (const key of Object.keys(spec)) {
      if (!['path', 'includeArrayIndex', 'preserveNullAndEmptyArrays'].includes(key)) {
        throw new AgentValidationError(`'$unwind' does not take '${key}'.`);
      }
    }
    fields.assertReadable(spec.path.slice(1), true);
    // The field now holds one element per row: no longer the column's values.
    fields.produceWithOrigin(rootOf(spec.path.slice(1)), undefined);
    if (spec.includeArrayIndex !== undefined) {
      fields.produce(
        this.outputName('$unwind.includeArrayIndex', spec.includeArrayIndex, fields, false),
      );
    }
    return arg;
  }

  protected replaceRoot(newRoot: unknown, fields: FieldTracker): void {
    validateExpression(newRoot, fields, this.facts);
    const literal = isObject(newRoot) && !Object.keys(newRoot).some((k) => k.startsWith('$'));
    if (literal) fields.replace(Object.keys(newRoot));
    else fields.becomeOpaque();
  }

  protected facet(arg: unknown, fields: FieldTracker, depth: number): Record<string, Pipeline> {
    if (!isObject(arg) || Object.keys(arg).length === 0) {
      throw new AgentValidationError(`'$facet' takes { "name": [stages...], ... }.`);
    }
    const out: Record<string, Pipeline> = {};
    for (const [name, sub] of Object.entries(arg)) {
      this.outputName('$facet', name, fields, false);
      if (!Array.isArray(sub)) {
        throw new AgentValidationError(`'$facet.${name}' must be an array of stages.`);
      }
      // Each branch starts from the same point with its own forward pass.
      out[name] = this.stages(sub, fields.clone(), depth + 1);
    }
    fields.replace(Object.keys(arg));
    return out;
  }

  protected bucket(stage: string, arg: unknown, fields: FieldTracker): Record<string, unknown> {
    if (!isObject(arg) || !('groupBy' in arg)) {
      throw new AgentValidationError(
        `'${stage}' needs 'groupBy', e.g. { "groupBy": "$price", ${
          stage === '$bucket' ? '"boundaries": [0, 100, 200]' : '"buckets": 5'
        } }.`,
      );
    }
    const known =
      stage === '$bucket'
        ? ['groupBy', 'boundaries', 'default', 'output']
        : ['groupBy', 'buckets', 'output', 'granularity'];
    for (const key of Object.keys(arg)) {
      if (!known.includes(key))
        throw new AgentValidationError(`'${stage}' does not take '${key}'.`);
    }
    validateExpression(arg.groupBy, fields, this.facts);
    if (stage === '$bucket' && (!Array.isArray(arg.boundaries) || arg.boundaries.length < 2)) {
      throw new AgentValidationError(`'$bucket.boundaries' must list at least two values.`);
    }
    if (stage === '$bucketAuto') positiveInteger('$bucketAuto.buckets', arg.buckets, 1);
    let names = ['count'];
    if (arg.output !== undefined) {
      if (!isObject(arg.output)) {
        throw new AgentValidationError(`'${stage}.output' takes { "name": { "$sum": 1 } }.`);
      }
      names = this.accumulators(`${stage}.output`, arg.output, fields);
    }
    fields.replace(['_id', ...names]);
    return arg;
  }

  protected setWindowFields(arg: unknown, fields: FieldTracker): Record<string, unknown> {
    if (!isObject(arg) || !isObject(arg.output)) {
      throw new AgentValidationError(
        `'$setWindowFields' needs 'output', e.g. { "sortBy": { "createdAt": 1 }, "output": ` +
          `{ "running": { "$sum": "$amount", "window": { "documents": ["unbounded", "current"] } } } }.`,
      );
    }
    if (arg.partitionBy !== undefined) validateExpression(arg.partitionBy, fields, this.facts);
    if (arg.sortBy !== undefined) this.sort(arg.sortBy, fields);
    const names: string[] = [];
    for (const [name, spec] of Object.entries(arg.output)) {
      this.outputName('$setWindowFields.output', name, fields, false);
      if (!isObject(spec)) {
        throw new AgentValidationError(`'$setWindowFields.output.${name}' must be an object.`);
      }
      for (const [op, value] of Object.entries(spec)) {
        if (op === 'window') continue;
        assertNotBlocked(op);
        validateExpression(value, fields, this.facts);
      }
      names.push(name);
    }
    fields.produce(...names);
    return arg;
  }
}

/** `{ a: { b: 1 } }` -> [['a.b', 1]]; expression objects (with `$` keys) stay values. */
function flattenProjection(spec: Record<string, unknown>, prefix = ''): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [key, value] of Object.entries(spec)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const nested =
      isObject(value) &&
      Object.keys(value).length > 0 &&
      !Object.keys(value).some((k) => k.startsWith('$'));
    if (nested) out.push(...flattenProjection(value, path));
    else out.push([path, value]);
  }
  return out;
}
