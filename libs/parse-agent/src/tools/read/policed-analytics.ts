import { AgentValidationError, InvalidQueryError, PointerShapeError } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import { DataPathUnavailableError } from '../../data/data-router';
import type { DataOperation, DataPath, DataRow } from '../../ports/data-path';
import { validateWhere, type Where } from '../../query/constraint-translator';
import { classesNamed } from '../../query/pipeline-classes';
import { refuseCollectionScan } from './analytics-policy';
import type { PipelineRun, ReaderCore } from './reader-core';

/**
 * A path's own analytics method when it has one for the request, else the pipeline. Either way
 * the caller's filter is planned first (canonical filter as asked, agent filters, tenant) and
 * pre-flighted when the operator refuses full scans.
 */
export async function runAnalytics(
  reader: ReaderCore,
  operation: DataOperation,
  className: string,
  pipeline: Record<string, unknown>[],
  run: PipelineRun,
  applyCanonical: boolean,
): Promise<DataRow[]> {
  const path = reader.path(operation);
  const native = run.native;
  const planned = async () => {
    const { where } = await reader.access.planWhere(className, run.where, applyCanonical);
    await preflight(reader, className, run.where, where);
    return where;
  };
  if (native && 'groupBy' in native && path.groupBy) {
    const where = await planned();
    const groups = await path.groupBy(className, { ...native.groupBy, where }, reader.options());
    return groups.map((g) => ({ _id: g.key, value: g.value }));
  }
  if (native && 'groupByDate' in native && path.groupByDate) {
    const where = await planned();
    const spec = { ...native.groupByDate, where };
    const groups = await path.groupByDate(className, spec, reader.options());
    return groups.map((g) => ({ _id: g.key, value: g.value }));
  }
  if (native && 'distinct' in native && native.pipelineOnly && !path.aggregate) {
    throw new AgentValidationError(native.pipelineOnly);
  }
  if (
    native &&
    'distinct' in native &&
    path.distinct &&
    !(native.pipelineWhenPossible && path.aggregate)
  ) {
    const where = await planned();
    let values = await path.distinct(className, { ...native.distinct, where }, reader.options());
    if (native.sort) {
      values = [...values].sort(compareValues);
      if (native.sort === 'desc') values.reverse();
    }
    return values.map((v) => ({ _id: v }));
  }
  if (!path.aggregate) {
    throw new DataPathUnavailableError(
      `The '${path.kind}' data path chosen for '${operation}' cannot run aggregation pipelines for this agent. Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot).`,
    );
  }
  await preflightMatch(reader, className, run.where, applyCanonical);
  return path.aggregate(className, pipeline, reader.options());
}

/**
 * With `refuseCollscan` on, explains a call that filters (the caller passed a non-empty where)
 * before it runs, with the where it runs with (canonical filter, agent filters and tenant
 * included, so a scope on an indexed field helps), and refuses a full scan of the class. Not
 * pre-flighted: a call without a filter (it reads the class as a whole by design), a class
 * marked @AgentAllowCollscan, and a deployment where no path can explain for this agent (Parse
 * REST alone: the guard needs a direct database path).
 */
export async function preflight(
  reader: ReaderCore,
  className: string,
  callerWhere: unknown,
  planned: Where,
): Promise<void> {
  if (!reader.analytics.refuseCollscan) return;
  if (!isPlainObject(callerWhere) || !Object.keys(callerWhere).length) return;
  if (reader.access.meta(className)?.allowCollscan) return;
  const path = explainPath(reader);
  if (!path?.explain) return;
  const summary = await path.explain(className, { where: planned }, reader.options());
  refuseCollectionScan(reader.analytics, reader.access, className, summary);
}

/**
 * The pre-flight of a pipeline: its leading `$match`, planned like a where. Constraints the query
 * language cannot express (an `$expr`, say) are left out of the explained filter; the rest is
 * explained as the database would start the pipeline.
 */
async function preflightMatch(
  reader: ReaderCore,
  className: string,
  match: Record<string, unknown> | undefined,
  applyCanonical: boolean,
): Promise<void> {
  if (!reader.analytics.refuseCollscan || !match) return;
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(match)) {
    try {
      validateWhere({ [key]: value });
      plain[key] = value;
    } catch {
      // Pipeline-only syntax: the pipeline validator accepted it, the explain cannot take it.
    }
  }
  if (!Object.keys(plain).length) return;
  let where: Where;
  try {
    ({ where } = await reader.access.planWhere(className, plain, applyCanonical));
  } catch (error) {
    // A value written in pipeline form ({ "$date": ... }) that the where language reads otherwise:
    // the pipeline validator accepted the stage, so only the explain is skipped.
    if (
      error instanceof InvalidQueryError ||
      error instanceof AgentValidationError ||
      error instanceof PointerShapeError
    )
      return;
    throw error;
  }
  await preflight(reader, className, plain, where);
}

/** The path that explains for this agent, or undefined when none can. */
function explainPath(reader: ReaderCore): DataPath | undefined {
  try {
    return reader.path('explain');
  } catch (error) {
    if (error instanceof DataPathUnavailableError) return undefined;
    throw error;
  }
}

/**
 * Per class the pipeline reads (the root and every $lookup/$unionWith class), the fields Parse's
 * protectedFields hide from this agent, as the path the operation runs on reports them. Empty
 * when no path serves the operation (a dry run still validates) or the path cannot tell.
 */
export async function protectedFieldsRead(
  reader: ReaderCore,
  operation: DataOperation,
  className: string,
  pipeline: unknown,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  let path: DataPath;
  try {
    path = reader.path(operation);
  } catch (error) {
    if (error instanceof DataPathUnavailableError) return out;
    throw error;
  }
  if (!path.protectedFields) return out;
  for (const name of new Set([className, ...classesNamed(pipeline)])) {
    // Only classes this agent may read: a hidden class is refused by the validator, unasked.
    if (typeof name !== 'string' || reader.access.isDenied(name)) continue;
    const hidden = await path.protectedFields(name, reader.signal);
    if (hidden.length) out.set(name, hidden);
  }
  return out;
}

/**
 * Whether the path the operation runs on aggregates documents as stored (internal columns
 * included); then every class the pipeline reads is projected to its visible fields first.
 * False when no path serves the operation (a dry run still validates).
 */
export function aggregatesStoredDocuments(reader: ReaderCore, operation: DataOperation): boolean {
  try {
    return reader.path(operation).aggregatesStoredDocuments === true;
  } catch (error) {
    if (error instanceof DataPathUnavailableError) return false;
    throw error;
  }
}

/** Values in a stable order for distinct's `sort`: numbers, then strings, then the rest as JSON. */
function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = typeof a === 'string' ? a : JSON.stringify(a);
  const sb = typeof b === 'string' ? b : JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}
