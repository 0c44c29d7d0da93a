/**
 * Validates an aggregation pipeline an agent sent (API field names) and rewrites it so that it can only
 * read what the agent may read: row scopes injected wherever a class's rows enter the pipeline, source
 * documents projected to the class's allowlist, fields tracked forward stage by stage, code-running and
 * writing stages refused at any depth. Pure: data in, data out; the storage translation comes later.
 */
import { AgentValidationError } from '../../core/errors';
import { needsAutoLimit } from './auto-limit';
import { FieldTracker } from './field-tracker';
import { assertNotInternal } from './pipeline-field-rules';
import {
  assertNotBlocked,
  isObject,
  validateExpression,
  validateMatchQuery,
} from './pipeline-expressions';
import { JoinStages } from './pipeline-join-stages';
import {
  DEFAULT_PIPELINE_LIMITS,
  Pipeline,
  PipelineLimits,
  PipelinePolicy,
  Stage,
  ValidatedPipeline,
} from './pipeline-policy';
import { positiveInteger } from './pipeline-walk-base';

export { LOOKUP_LOCAL_VARIABLE } from './pipeline-join-stages';

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

class PipelineWalk extends JoinStages {
  private stageCount = 0;

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
}
