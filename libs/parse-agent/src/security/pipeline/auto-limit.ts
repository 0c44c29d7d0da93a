/**
 * Conversational safety bound for aggregate: a pipeline with no terminal bound gets `{ $limit: N }`
 * appended so a `$group` over a large table cannot flood the response or the model's context.
 */
import type { Pipeline } from './pipeline-policy';

/**
 * True unless the last stage already bounds the result: `$limit` (the caller's own cap), `$count`
 * (one row), or a `$group` on `_id: null` (at most one row). Trailing `$sort`/`$project` do not bound.
 */
export function needsAutoLimit(pipeline: Pipeline): boolean {
  const last = pipeline[pipeline.length - 1];
  if (!last) return true;
  if ('$limit' in last || '$count' in last) return false;
  const group = last.$group;
  return !(
    typeof group === 'object' &&
    group !== null &&
    (group as { _id?: unknown })._id === null
  );
}

export interface AutoLimitNotice {
  auto_limited: true;
  auto_limit: number;
  hint: string;
}

/**
 * The envelope keys to add to an aggregate result. Only when the cap was appended AND reached: a
 * pipeline that returned fewer rows than the cap was not actually truncated, so it pays no hint.
 */
export function autoLimitNotice(
  autoLimited: boolean,
  autoLimit: number,
  resultCount: number,
): AutoLimitNotice | undefined {
  if (!autoLimited || resultCount < autoLimit) return undefined;
  return {
    auto_limited: true,
    auto_limit: autoLimit,
    hint:
      `The pipeline had no terminal $limit or $count, so { "$limit": ${autoLimit} } was appended and ` +
      `the result may be cut short. End the pipeline with your own { "$limit": N }, or call ` +
      `count_objects first to see how many rows there are.`,
  };
}
