/** The `distinct` helper as a pipeline, and the shaping of its rows into the tool's envelope. */
import { AgentValidationError } from '../../core/errors';
import { assertFieldArgument, plainKey, resolveLimit, whereStages } from './group-by-pipeline';
import type { Pipeline, Where } from './pipeline-policy';
import { compactPointerKeys } from './pointer-compaction';

export const DISTINCT_DEFAULT_LIMIT = 1000;
export const DISTINCT_MAX_LIMIT = 5000;

export interface DistinctParams {
  field: string;
  where?: Where;
  /** Sort the values on the server; unsorted when omitted. */
  sort?: 'asc' | 'desc';
  /** Values returned; defaults to 1000, at most 5000. The pipeline asks for one more to see truncation. */
  limit?: number;
  /** Count each element of an array field (MongoDB's distinct command does this). */
  flattenArrays?: boolean;
}

export function buildDistinctPipeline(params: DistinctParams): Pipeline {
  assertFieldArgument('field', params.field);
  const limit = resolveLimit(params.limit, DISTINCT_DEFAULT_LIMIT, DISTINCT_MAX_LIMIT);
  if (params.sort !== undefined && params.sort !== 'asc' && params.sort !== 'desc') {
    throw new AgentValidationError(`'sort' for distinct must be "asc" or "desc".`);
  }
  return [
    ...whereStages(params.where),
    ...(params.flattenArrays
      ? [{ $unwind: { path: `$${params.field}`, preserveNullAndEmptyArrays: true } }]
      : []),
    { $group: { _id: `$${params.field}` } },
    ...(params.sort ? [{ $sort: { _id: params.sort === 'asc' ? 1 : -1 } }] : []),
    { $limit: limit + 1 },
  ];
}

export interface DistinctEnvelope {
  class_name: string;
  field: string;
  count: number;
  values: unknown[];
  pointer_class?: string;
  truncated?: true;
}

export function shapeDistinctResult(input: {
  className: string;
  field: string;
  limit?: number;
  rows: readonly { _id?: unknown }[];
  pointerClass?: string;
}): DistinctEnvelope {
  const limit = input.limit ?? DISTINCT_DEFAULT_LIMIT;
  // Missing and null are no value, on every path: a path's own distinct leaves them out, and the
  // pipeline's null group (rows without the field, an empty array unwound) is dropped here.
  const present = input.rows.map((r) => plainKey(r._id)).filter((v) => v !== null);
  const compacted = compactPointerKeys(present.slice(0, limit), input.pointerClass);
  const envelope: DistinctEnvelope = {
    class_name: input.className,
    field: input.field,
    count: compacted.keys.length,
    values: compacted.keys,
  };
  if (compacted.pointerClass) envelope.pointer_class = compacted.pointerClass;
  if (present.length > limit) envelope.truncated = true;
  return envelope;
}
