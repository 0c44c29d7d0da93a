import { InvalidQueryError } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import { columnRef, quoteIdent } from './pg-identifiers';
import type { PgField } from './pg-schema';
import { SqlParams, type SqlQuery } from './sql-params';
import { scopedSource, type SqlContext } from './scoped-source';
import { countStage, limitSkipStage, matchStage, sortStage } from './stages/basic-stages';
import { bucketAutoStage } from './stages/bucket-auto-stage';
import { facetStage } from './stages/facet-stage';
import { bucketStage, groupStage, sortByCountStage } from './stages/group-stages';
import { lookupStage } from './stages/lookup-stage';
import { ORD, type Ref, type Relation, type StageEnv } from './stages/relation';
import { addFieldsStage, projectStage, replaceRootStage, unsetStage } from './stages/shape-stages';
import { unwindStage } from './stages/unwind-stage';
import { windowStage } from './stages/window-stage';

export { SUPPORTED_ACCUMULATORS } from './stages/group-stages';

type StageCompiler = (env: StageEnv, spec: unknown, rel: Relation, op: string) => Relation;

const STAGES: Record<string, StageCompiler> = {
  $match: matchStage,
  $group: groupStage,
  $sort: sortStage,
  $limit: (env, spec, rel) => limitSkipStage(env, spec, rel, 'LIMIT'),
  $skip: (env, spec, rel) => limitSkipStage(env, spec, rel, 'OFFSET'),
  $project: projectStage,
  $addFields: addFieldsStage,
  $set: addFieldsStage,
  $unset: unsetStage,
  $count: countStage,
  $unwind: unwindStage,
  $lookup: lookupStage,
  $sortByCount: sortByCountStage,
  $bucket: bucketStage,
  $bucketAuto: bucketAutoStage,
  $replaceRoot: (env, spec, rel, op) => {
    if (!isPlainObject(spec) || !('newRoot' in spec) || Object.keys(spec).length !== 1) {
      throw new InvalidQueryError(`$replaceRoot takes { newRoot: <document> }.`);
    }
    return replaceRootStage(env, spec.newRoot, rel, op);
  },
  $replaceWith: replaceRootStage,
  $facet: facetStage,
  $setWindowFields: windowStage,
};

export const SUPPORTED_STAGES = Object.keys(STAGES);

/** What to use instead of a stage this path does not compile. */
const NEAREST: Record<string, string> = {
  $graphLookup: 'use $lookup along a pointer, one level per $lookup',
  $unionWith: 'run a second aggregate on the other class and combine the answers',
  $sample: 'use $sort on a field and $limit',
  $densify: 'group first, then fill the gaps from the known range in your answer',
  $fill: 'use $addFields with $ifNull',
  $redact: 'use $match with $expr',
  $geoNear: 'filter GeoPoints with $match and $within/$box',
};

const MAX_STAGES = 50;

/** The compiled pipeline and the fields of its output rows (to shape them for the API). */
export interface CompiledPipeline extends SqlQuery {
  fields: Record<string, PgField>;
}

export interface PipelineOptions {
  /** A final cap on the rows returned (bound, applied after the pipeline). */
  maxRows?: number;
}

/**
 * Compiles a MongoDB-style pipeline over `className` into one parameterized query of nested
 * subqueries (one compiler per stage family under stages/). Every class read (the base class and
 * every $lookup) is a scoped source: row ACL, the scope's where and only visible columns. Stages
 * outside SUPPORTED_STAGES are refused before any SQL runs, naming the nearest supported way.
 */
export function compilePipeline(
  className: string,
  pipeline: unknown,
  ctx: SqlContext,
  options: PipelineOptions = {},
): CompiledPipeline {
  const params = new SqlParams();
  const base = scopedSource(className, ctx, params);
  const env = stageEnv(params, ctx, {});
  const rel = runStages(
    env,
    pipeline,
    { sql: base.sql, fields: base.fields, ordered: false, listable: false },
    'pipeline',
  );
  const a = params.alias('s');
  const order = rel.ordered ? ` ORDER BY ${a}.${ORD}` : '';
  const limit =
    options.maxRows === undefined
      ? ''
      : ` LIMIT ${params.addCount(options.maxRows, 'maxRows', { min: 1 })}`;
  // A bigint rank leaves as the float8 every Number is (node-postgres reads a bigint as a string).
  const cols = Object.entries(rel.fields).map(([name, field]) =>
    field.bigint ? `${columnRef(name, a)}::float8 AS ${quoteIdent(name)}` : columnRef(name, a),
  );
  return {
    ...params.query(
      `SELECT ${cols.length ? cols.join(', ') : 'NULL AS "__none"'} FROM (${rel.sql}) AS ${a}${order}${limit}`,
    ),
    fields: rel.fields,
  };
}

function stageEnv(params: SqlParams, ctx: SqlContext, vars: Record<string, Ref>): StageEnv {
  const env: StageEnv = {
    params,
    ctx,
    vars,
    pipeline: (stages, rel, where) => runStages(env, stages, rel, where),
    withVars: (more) => stageEnv(params, ctx, { ...vars, ...more }),
  };
  return env;
}

function runStages(env: StageEnv, pipeline: unknown, start: Relation, where: string): Relation {
  if (!Array.isArray(pipeline)) throw new InvalidQueryError(`${where} must be an array of stages.`);
  if (pipeline.length > MAX_STAGES) {
    throw new InvalidQueryError(`${where} has more than ${MAX_STAGES} stages.`);
  }
  let rel = start;
  pipeline.forEach((stage, index) => {
    const keys = isPlainObject(stage) ? Object.keys(stage) : [];
    if (keys.length !== 1) {
      throw new InvalidQueryError(
        `Stage ${index} must be an object with exactly one stage operator.`,
      );
    }
    const op = keys[0];
    const compile = Object.prototype.hasOwnProperty.call(STAGES, op) ? STAGES[op] : undefined;
    if (!compile) {
      const nearest = Object.prototype.hasOwnProperty.call(NEAREST, op)
        ? ` Instead, ${NEAREST[op]}.`
        : '';
      throw new InvalidQueryError(
        `Stage '${op}' is not supported on the PostgreSQL path.${nearest} Supported stages: ` +
          `${SUPPORTED_STAGES.join(', ')}.`,
      );
    }
    const stageEnv = orderMatters(pipeline, index) ? env : { ...env, orderUnused: true };
    rel = compile(stageEnv, (stage as Record<string, unknown>)[op], rel, op);
  });
  return rel;
}

/** Stages that keep each row as it is (or drop it) without looking at the order of the rows. */
const ROW_WISE = ['$match', '$project', '$addFields', '$set', '$unset'];
/** Accumulators whose result does not depend on the order of the rows. */
const ORDER_FREE = [
  '$sum',
  '$avg',
  '$min',
  '$max',
  '$count',
  '$addToSet',
  '$stdDevPop',
  '$stdDevSamp',
];

/**
 * Whether the order of the rows after stage `index` can change the answer: false only when the
 * stages after it are row-wise up to one that folds the rows without order ($count,
 * $sortByCount, a $group of order-free accumulators). The answer's own order always matters.
 */
function orderMatters(pipeline: unknown[], index: number): boolean {
  for (const stage of pipeline.slice(index + 1)) {
    const op = isPlainObject(stage) ? Object.keys(stage)[0] : undefined;
    if (op === undefined) return true;
    if (ROW_WISE.includes(op)) continue;
    if (op === '$count' || op === '$sortByCount') return false;
    const spec = (stage as Record<string, unknown>)[op];
    if (op !== '$group' || !isPlainObject(spec)) return true;
    return Object.entries(spec).some(
      ([name, acc]) =>
        name !== '_id' &&
        !(isPlainObject(acc) && Object.keys(acc).every((k) => ORDER_FREE.includes(k))),
    );
  }
  return true;
}
