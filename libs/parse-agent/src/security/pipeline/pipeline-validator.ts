/**
 * Validates an aggregation pipeline an agent sent (API field names) and rewrites it so that it can only
 * read what the agent may read: row scopes injected wherever a class's rows enter the pipeline, source
 * documents projected to the class's allowlist, fields tracked forward stage by stage, code-running and
 * writing stages refused at any depth. Pure: data in, data out; the storage translation comes later.
 */
import { AccessDeniedError, AgentValidationError } from '../../core/errors';
import { needsAutoLimit } from './auto-limit';
import { ALWAYS_READABLE, FieldTracker, rootOf } from './field-tracker';
import { isInternalField } from '../../query/internal-fields';
import { apiNameForStorage, assertNotInternal } from './pipeline-field-rules';
import {
  assertNotBlocked,
  isObject,
  validateExpression,
  validateMatchQuery,
  WalkFacts,
} from './pipeline-expressions';
import {
  DEFAULT_PIPELINE_LIMITS,
  Pipeline,
  PipelineLimits,
  PipelinePolicy,
  Stage,
  ValidatedPipeline,
} from './pipeline-policy';

export const SUPPORTED_STAGES: readonly string[] = [
  '$match',
  '$project',
  '$addFields',
  '$set',
  '$unset',
  '$group',
  '$sort',
  '$limit',
  '$skip',
  '$count',
  '$unwind',
  '$lookup',
  '$graphLookup',
  '$unionWith',
  '$facet',
  '$bucket',
  '$bucketAuto',
  '$sortByCount',
  '$replaceRoot',
  '$replaceWith',
  '$sample',
  '$setWindowFields',
];

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

/** The variable a rewritten localField/foreignField `$lookup` binds the local value to. */
export const LOOKUP_LOCAL_VARIABLE = 'pa_local';

/**
 * Validates and rewrites `pipeline` run on `className`. Throws AccessDeniedError (class, field, scope
 * refusals), SecurityBlockedError (server-side JS, writing stages) or AgentValidationError (shape, bounds).
 */
export function validatePipeline(
  className: string,
  pipeline: unknown,
  policy: PipelinePolicy,
  limits: Partial<PipelineLimits> = {},
): ValidatedPipeline {
  const lim: PipelineLimits = { ...DEFAULT_PIPELINE_LIMITS, ...limits };
  if (!Array.isArray(pipeline)) {
    throw new AgentValidationError(
      `'pipeline' must be an array of stages, e.g. [{ "$match": { "status": "paid" } }, { "$limit": 10 }].`,
    );
  }
  assertWithinSize(pipeline, lim);
  scanJson(pipeline, 0, lim.maxJsonDepth);
  const walk = new PipelineWalk(policy, lim);
  walk.readClass(className);
  const fields = FieldTracker.forClass(className, policy.allowedFields(className));
  const body = walk.stages(pipeline, fields, 1);
  walk.finish();
  const out: Pipeline = [...walk.sourcePrefix(className), ...body];
  const autoLimited = needsAutoLimit(body);
  if (autoLimited) out.push({ $limit: lim.autoLimit });
  return {
    pipeline: out,
    autoLimited,
    autoLimit: lim.autoLimit,
    classes: walk.classes(),
    columnOrigin: (name) => fields.originOf(name),
  };
}

function assertWithinSize(pipeline: unknown[], lim: PipelineLimits): void {
  let json: string;
  try {
    json = JSON.stringify(pipeline);
  } catch {
    throw new AgentValidationError(`'pipeline' must be plain JSON (no cycles, no BigInt).`);
  }
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > lim.maxBytes) {
    throw new AgentValidationError(
      `Pipeline is ${bytes} bytes; the limit is ${lim.maxBytes}. Send a shorter pipeline: move large ` +
        `$in lists into several calls or filter with ranges.`,
    );
  }
}

/**
 * A backstop over every key and string, wherever it sits: blocked operators, internal names as keys,
 * and `$refs` through internal names are refused even in positions the stage walker does not model.
 */
function scanJson(value: unknown, depth: number, maxDepth: number): void {
  if (depth > maxDepth) {
    throw new AgentValidationError(
      `Pipeline nests deeper than ${maxDepth} levels. Flatten nested $and/$or and expressions.`,
    );
  }
  if (typeof value === 'string') {
    if (value.startsWith('$') && !value.startsWith('$$')) assertNotInternal(value.slice(1), value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) scanJson(item, depth + 1, maxDepth);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, inner] of Object.entries(value)) {
    if (key.startsWith('$')) assertNotBlocked(key);
    else assertNotInternal(key);
    scanJson(inner, depth + 1, maxDepth);
  }
}

class PipelineWalk {
  private stageCount = 0;
  private readonly classesRead: string[] = [];
  private readonly unrestricted = new Set<string>();
  private readonly facts: WalkFacts = { usesObjectToArray: false };

  constructor(
    private readonly policy: PipelinePolicy,
    private readonly lim: PipelineLimits,
  ) {}

  readClass(className: unknown): string {
    if (typeof className !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(className)) {
      throw new AgentValidationError(
        `Class name ${JSON.stringify(className)} is not a valid Parse class name.`,
      );
    }
    this.policy.assertClassReadable(className);
    if (!this.classesRead.includes(className)) this.classesRead.push(className);
    if (!this.policy.allowedFields(className)) this.unrestricted.add(className);
    return className;
  }

  classes(): string[] {
    return [...this.classesRead];
  }

  /** Whole-pipeline checks that need every stage seen first. */
  finish(): void {
    if (this.facts.usesObjectToArray && this.unrestricted.size > 0) {
      const names = [...this.unrestricted].join(', ');
      throw new AccessDeniedError(
        `'$objectToArray' turns field names into values, so it is only allowed when every class the ` +
          `pipeline reads has a field allowlist; ${names} has none. Name the fields you need instead.`,
        { kind: 'field_denied', deniedField: '$objectToArray' },
      );
    }
  }

  /** The stages that must open any pipeline reading `className`: its scopes, then its allowlist. */
  sourcePrefix(className: string): Pipeline {
    return [...this.scopeStages(className), ...this.projectionStages(className)];
  }

  private scopeStages(className: string): Pipeline {
    return this.policy.scopeMatches(className).map((where) => ({ $match: structuredClone(where) }));
  }

  private projectionStages(className: string): Pipeline {
    const allowed = this.policy.allowedFields(className);
    if (!allowed) return [];
    const projection: Record<string, 1> = {};
    for (const name of [...ALWAYS_READABLE, ...[...allowed].sort()]) {
      if (!isInternalField(name)) projection[name] = 1;
    }
    return [{ $project: projection }];
  }

  stages(pipeline: unknown[], fields: FieldTracker, depth: number): Pipeline {
    if (depth > this.lim.maxPipelineDepth) {
      throw new AgentValidationError(
        `Sub-pipelines ($facet, $lookup, $unionWith) nest deeper than ${this.lim.maxPipelineDepth} levels. ` +
          `Split the work into several calls.`,
      );
    }
    return pipeline.map((stage, index) => this.stage(stage, index, fields, depth));
  }

  private stage(stage: unknown, index: number, fields: FieldTracker, depth: number): Stage {
    this.stageCount += 1;
    if (this.stageCount > this.lim.maxStages) {
      throw new AgentValidationError(
        `Pipeline has more than ${this.lim.maxStages} stages (sub-pipelines included). ` +
          `Combine stages or split the analysis into several calls.`,
      );
    }
    if (!isObject(stage) || Object.keys(stage).length !== 1) {
      throw new AgentValidationError(
        `Stage ${index} must be an object with exactly one '$stage' key, e.g. { "$match": { ... } }.`,
      );
    }
    const [name] = Object.keys(stage);
    const arg = stage[name];
    assertNotBlocked(name);
    switch (name) {
      case '$match':
        validateMatchQuery(arg, fields, this.facts);
        return { $match: arg };
      case '$project':
        return { $project: this.project(arg, fields) };
      case '$addFields':
      case '$set':
        return { [name]: this.addFields(name, arg, fields) };
      case '$unset':
        return { $unset: this.unset(arg, fields) };
      case '$group':
        return { $group: this.group(arg, fields) };
      case '$sort':
        return { $sort: this.sort(arg, fields) };
      case '$limit':
        return { $limit: positiveInteger('$limit', arg, 1) };
      case '$skip':
        return { $skip: positiveInteger('$skip', arg, 0) };
      case '$sample':
        if (!isObject(arg) || Object.keys(arg).length !== 1) {
          throw new AgentValidationError(`'$sample' takes { "size": N }.`);
        }
        return { $sample: { size: positiveInteger('$sample.size', arg.size, 1) } };
      case '$count': {
        const out = this.outputName('$count', arg, fields, false);
        fields.replace([out]);
        return { $count: out };
      }
      case '$sortByCount':
        validateExpression(arg, fields, this.facts);
        fields.replace(['_id', 'count']);
        return { $sortByCount: arg };
      case '$unwind':
        return { $unwind: this.unwind(arg, fields) };
      case '$replaceRoot':
        if (!isObject(arg) || !('newRoot' in arg) || Object.keys(arg).length !== 1) {
          throw new AgentValidationError(`'$replaceRoot' takes { "newRoot": <expression> }.`);
        }
        this.replaceRoot(arg.newRoot, fields);
        return { $replaceRoot: arg };
      case '$replaceWith':
        this.replaceRoot(arg, fields);
        return { $replaceWith: arg };
      case '$facet':
        return { $facet: this.facet(arg, fields, depth) };
      case '$bucket':
      case '$bucketAuto':
        return { [name]: this.bucket(name, arg, fields) };
      case '$setWindowFields':
        return { $setWindowFields: this.setWindowFields(arg, fields) };
      case '$lookup':
        return { $lookup: this.lookup(arg, fields, depth) };
      case '$graphLookup':
        return { $graphLookup: this.graphLookup(arg, fields) };
      case '$unionWith':
        return { $unionWith: this.unionWith(arg, fields, depth) };
      default:
        throw new AgentValidationError(
          `Unsupported pipeline stage '${name}'. Supported stages: ${SUPPORTED_STAGES.join(', ')}.`,
        );
    }
  }

  /** A name a stage creates. `dotted` allows `a.b` (sets a sub-field of `a`). */
  private outputName(where: string, name: unknown, fields: FieldTracker, dotted: boolean): string {
    if (typeof name !== 'string' || name.length === 0 || name.startsWith('$')) {
      throw new AgentValidationError(
        `${where}: output field names must be non-empty strings not starting with '$' (got ${JSON.stringify(name)}).`,
      );
    }
    if (!dotted && name.includes('.')) {
      throw new AgentValidationError(`${where}: output field '${name}' may not contain '.'.`);
    }
    assertNotInternal(name);
    const root = name.split('.')[0];
    if (
      apiNameForStorage(root, true) !== undefined &&
      !(root === '_id' && fields.isProduced('_id'))
    ) {
      // Writing a storage spelling would confuse the storage translation; treat it like a read.
      fields.assertReadable(name, false);
    }
    return name;
  }

  private project(arg: unknown, fields: FieldTracker): Record<string, unknown> {
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

  private addFields(stage: string, arg: unknown, fields: FieldTracker): Record<string, unknown> {
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

  private unset(arg: unknown, fields: FieldTracker): string | string[] {
    const names = typeof arg === 'string' ? [arg] : arg;
    if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== 'string')) {
      throw new AgentValidationError(`'$unset' takes a field name or an array of field names.`);
    }
    for (const name of names as string[]) this.outputName('$unset', name, fields, true);
    fields.drop(...(names as string[]));
    return arg as string | string[];
  }

  private accumulators(
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

  private group(arg: unknown, fields: FieldTracker): Record<string, unknown> {
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

  private sort(arg: unknown, fields: FieldTracker): Record<string, unknown> {
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

  private unwind(arg: unknown, fields: FieldTracker): unknown {
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

  private replaceRoot(newRoot: unknown, fields: FieldTracker): void {
    validateExpression(newRoot, fields, this.facts);
    const literal = isObject(newRoot) && !Object.keys(newRoot).some((k) => k.startsWith('$'));
    if (literal) fields.replace(Object.keys(newRoot));
    else fields.becomeOpaque();
  }

  private facet(arg: unknown, fields: FieldTracker, depth: number): Record<string, Pipeline> {
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

  private bucket(stage: string, arg: unknown, fields: FieldTracker): Record<string, unknown> {
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

  private setWindowFields(arg: unknown, fields: FieldTracker): Record<string, unknown> {
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

  private lookup(arg: unknown, fields: FieldTracker, depth: number): Record<string, unknown> {
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

  private assertPointerTarget(
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

  private graphLookup(arg: unknown, fields: FieldTracker): Record<string, unknown> {
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

  private unionWith(arg: unknown, fields: FieldTracker, depth: number): Record<string, unknown> {
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

function positiveInteger(where: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new AgentValidationError(
      `'${where}' must be an integer >= ${min} (got ${JSON.stringify(value)}).`,
    );
  }
  return value;
}
