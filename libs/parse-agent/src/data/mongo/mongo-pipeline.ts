/**
 * Turns a validated pipeline (API names, scopes injected by the pipeline validator) into the one
 * MongoDB runs: every place a class's documents enter (the root, each `$lookup`, each `$unionWith`)
 * opens with that class's guards (the `_rperm` match and any CLP row match, in storage names) and
 * its view stage. Pure: the caller resolves each class's guards and view first.
 */
import { AgentValidationError } from '../../core/errors';
import type { MongoDoc } from './mongo-driver';
import type { MongoClassSchema } from './mongo-schema';
import { apiMatch, storageMatch } from './mongo-storage';
import { isPlainObject } from '../../core/plain-object';

/** What opens every source of one class's documents. */
export interface MongoClassSource {
  schema: MongoClassSchema;
  /** Storage-name stages that must come first: the ACL match, then any CLP row match. Empty for the master key. */
  guards: MongoDoc[];
  /** The `$project` presenting documents in API names without internal or protected fields. */
  view: MongoDoc;
}

export interface MongoPipelineContext {
  source(className: string): MongoClassSource;
  collection(className: string): string;
}

type Stage = Record<string, unknown>;

/** The join variable; the pipeline validator reserves this name, so no agent `let` can shadow it. */
const LOOKUP_LOCAL_VARIABLE = 'pa_local';

/** The pipeline to run on the root class's collection. */
export function mongoPipeline(
  className: string,
  pipeline: readonly Stage[],
  ctx: MongoPipelineContext,
): MongoDoc[] {
  return sourcePipeline(className, pipeline, ctx);
}

/**
 * guards, then the leading `$match` stages that translate exactly to storage names (so indexes
 * apply), then the view, then the rest in API names. `storageJoin` is a join condition already in
 * storage names (a `$lookup` on objectId).
 */
function sourcePipeline(
  className: string,
  stages: readonly Stage[],
  ctx: MongoPipelineContext,
  join: { storage?: MongoDoc[]; api?: MongoDoc[] } = {},
): MongoDoc[] {
  const source = ctx.source(className);
  const hoisted: MongoDoc[] = [];
  const kept: MongoDoc[] = [];
  let index = 0;
  for (; index < stages.length && isPlainObject(stages[index].$match); index++) {
    const match = apiMatch(stages[index].$match as MongoDoc, source.schema);
    const storage = storageMatch(match, source.schema);
    if (storage) hoisted.push({ $match: storage });
    else kept.push({ $match: match });
  }
  return [
    ...source.guards,
    ...(join.storage ?? []),
    ...hoisted,
    source.view,
    ...(join.api ?? []),
    ...kept,
    ...stages.slice(index).map((s) => scopeStage(s, ctx)),
  ];
}

function scopeStage(stage: Stage, ctx: MongoPipelineContext): MongoDoc {
  const [name] = Object.keys(stage);
  const arg = stage[name];
  switch (name) {
    case '$match':
      return { $match: apiMatch(arg as MongoDoc) };
    case '$lookup':
      return { $lookup: lookup(arg as Record<string, unknown>, ctx) };
    case '$unionWith': {
      const spec = arg as { coll: string; pipeline?: Stage[] };
      return {
        $unionWith: {
          coll: ctx.collection(spec.coll),
          pipeline: sourcePipeline(spec.coll, spec.pipeline ?? [], ctx),
        },
      };
    }
    case '$facet': {
      const out: Record<string, MongoDoc[]> = {};
      for (const [branch, sub] of Object.entries(arg as Record<string, Stage[]>)) {
        out[branch] = sub.map((s) => scopeStage(s, ctx));
      }
      return { $facet: out };
    }
    case '$graphLookup':
      // A recursive search reads raw documents at every hop: there is no place for the ACL match.
      throw new AgentValidationError(
        `'$graphLookup' is not available on the direct MongoDB path: it cannot apply row-level ACLs at each hop. Use $lookup with a pipeline (one hop per $lookup) instead.`,
      );
    default:
      return stage;
  }
}

function lookup(arg: Record<string, unknown>, ctx: MongoPipelineContext): MongoDoc {
  const from = arg.from as string;
  const sub = (arg.pipeline as Stage[] | undefined) ?? [];
  const vars: Record<string, unknown> = isPlainObject(arg.let) ? { ...arg.let } : {};
  const storageJoin: MongoDoc[] = [];
  const apiJoin: MongoDoc[] = [];
  if (typeof arg.localField === 'string' && typeof arg.foreignField === 'string') {
    // Equality join rewritten as let + pipeline so the foreign class's guards and view can run first.
    vars[LOOKUP_LOCAL_VARIABLE] = `$${arg.localField}`;
    const local = `$$${LOOKUP_LOCAL_VARIABLE}`;
    const values = { $cond: [{ $isArray: local }, local, [local]] };
    if (arg.foreignField === 'objectId') {
      storageJoin.push({ $match: { $expr: { $in: ['$_id', values] } } });
    } else {
      apiJoin.push({ $match: { $expr: { $in: [`$${arg.foreignField}`, values] } } });
    }
  }
  const inner = sourcePipeline(from, sub, ctx, { storage: storageJoin, api: apiJoin });
  return {
    from: ctx.collection(from),
    ...(Object.keys(vars).length ? { let: vars } : {}),
    pipeline: inner,
    as: arg.as,
  };
}
