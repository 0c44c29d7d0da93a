/**
 * The `group_by` helper as a plain pipeline (API field names) plus the shaping of its rows into the
 * tool's envelope. The pipeline still goes through validatePipeline, which adds scopes and checks fields.
 */
import { AgentValidationError } from '../../core/errors';
import type { Pipeline, Stage, Where } from './pipeline-policy';
import { compactPointerKeys } from './pointer-compaction';

export const GROUP_OPERATIONS = ['count', 'sum', 'avg', 'average', 'min', 'max'] as const;
export type GroupOperation = (typeof GROUP_OPERATIONS)[number];
export const GROUP_SORTS = ['value_desc', 'value_asc', 'key_desc', 'key_asc'] as const;
export type GroupSort = (typeof GROUP_SORTS)[number];

export const GROUP_BY_DEFAULT_LIMIT = 200;
export const GROUP_BY_MAX_LIMIT = 1000;

export interface GroupByParams {
  field: string;
  where?: Where;
  operation?: GroupOperation;
  valueField?: string;
  /** Groups returned; defaults to 200, at most 1000. The pipeline asks for one more to see truncation. */
  limit?: number;
  /** Defaults to value_desc (largest groups first). */
  sort?: GroupSort;
  /** `$unwind` the field first so each array element is its own group. */
  flattenArrays?: boolean;
}

/** Checks a field name argument: a bare API name, not a `$reference`. */
export function assertFieldArgument(name: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new AgentValidationError(`'${name}' must be a field name, e.g. "status".`);
  }
  if (value.startsWith('$')) {
    throw new AgentValidationError(
      `'${name}' takes a bare field name: write "${value.replace(/^\$+/, '')}", not "${value}".`,
    );
  }
}

export function resolveLimit(value: unknown, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new AgentValidationError(
      `'limit' must be an integer from 1 to ${max} (got ${JSON.stringify(value)}).`,
    );
  }
  return value;
}

/** The accumulator for an operation; `count` needs no value field, the others require one. */
export function accumulatorFor(operation: unknown, valueField: unknown): Record<string, unknown> {
  const op = operation ?? 'count';
  if (typeof op !== 'string' || !(GROUP_OPERATIONS as readonly string[]).includes(op)) {
    throw new AgentValidationError(
      `Unknown operation ${JSON.stringify(op)}. Use one of: count, sum, avg, min, max.`,
    );
  }
  if (op === 'count') return { $sum: 1 };
  assertFieldArgument('value_field', valueField);
  const mongoOp = op === 'average' ? '$avg' : `$${op}`;
  return { [mongoOp]: `$${valueField}` };
}

export function sortStage(sort: unknown, fallback: GroupSort): Stage {
  const s = sort ?? fallback;
  if (typeof s !== 'string' || !(GROUP_SORTS as readonly string[]).includes(s)) {
    throw new AgentValidationError(
      `Unknown sort ${JSON.stringify(s)}. Use one of: ${GROUP_SORTS.join(', ')}.`,
    );
  }
  // A second key keeps ties in a stable order across runs.
  switch (s as GroupSort) {
    case 'value_desc':
      return { $sort: { value: -1, _id: 1 } };
    case 'value_asc':
      return { $sort: { value: 1, _id: 1 } };
    case 'key_desc':
      return { $sort: { _id: -1 } };
    default:
      return { $sort: { _id: 1 } };
  }
}

export function whereStages(where: unknown): Pipeline {
  if (where === undefined || where === null) return [];
  if (typeof where !== 'object' || Array.isArray(where)) {
    throw new AgentValidationError(`'where' must be an object, e.g. { "status": "paid" }.`);
  }
  return Object.keys(where).length ? [{ $match: where as Where }] : [];
}

export function buildGroupByPipeline(params: GroupByParams): Pipeline {
  assertFieldArgument('field', params.field);
  const value = accumulatorFor(params.operation, params.valueField);
  const limit = resolveLimit(params.limit, GROUP_BY_DEFAULT_LIMIT, GROUP_BY_MAX_LIMIT);
  return [
    ...whereStages(params.where),
    ...(params.flattenArrays ? [{ $unwind: `$${params.field}` }] : []),
    { $group: { _id: `$${params.field}`, value } },
    sortStage(params.sort, 'value_desc'),
    { $limit: limit + 1 },
  ];
}

export interface GroupRow {
  _id?: unknown;
  value?: unknown;
  /** The provenance stamp of the group, when the agent asked for one (sourceProvenance). */
  _source?: unknown;
}

/** A group's provenance stamp, kept when a row is shaped into `{ key, value }`. */
export function sourceOf(row: GroupRow): { _source?: unknown } {
  return row._source === undefined ? {} : { _source: row._source };
}

/** Turns a group key into JSON the model reads easily: Dates as ISO strings, Parse dates unwrapped. */
export function plainKey(key: unknown): unknown {
  if (key instanceof Date) return key.toISOString();
  if (typeof key === 'object' && key !== null && !Array.isArray(key)) {
    const k = key as Record<string, unknown>;
    if (k.__type === 'Date' && typeof k.iso === 'string') return k.iso;
    if (typeof k.$date === 'string') return k.$date;
  }
  return key === undefined ? null : key;
}

export interface GroupByEnvelope {
  class_name: string;
  field: string;
  operation: string;
  group_count: number;
  limit: number;
  groups: { key: unknown; value: unknown; _source?: unknown }[];
  pointer_class?: string;
  truncated?: true;
}

/**
 * Shapes raw `{ _id, value }` rows. `pointerClass` is the class the field points to when it is a
 * pointer: keys then come back as bare objectIds and the class appears once as `pointer_class`.
 */
export function shapeGroupByResult(input: {
  className: string;
  field: string;
  operation?: string;
  limit?: number;
  rows: readonly GroupRow[];
  pointerClass?: string;
}): GroupByEnvelope {
  const limit = input.limit ?? GROUP_BY_DEFAULT_LIMIT;
  const rows = input.rows.slice(0, limit);
  const compacted = compactPointerKeys(
    rows.map((r) => plainKey(r._id)),
    input.pointerClass,
  );
  const envelope: GroupByEnvelope = {
    class_name: input.className,
    field: input.field,
    operation: input.operation ?? 'count',
    group_count: rows.length,
    limit,
    groups: rows.map((r, i) => ({
      key: compacted.keys[i],
      value: r.value ?? null,
      ...sourceOf(r),
    })),
  };
  if (compacted.pointerClass) envelope.pointer_class = compacted.pointerClass;
  if (input.rows.length > limit) envelope.truncated = true;
  return envelope;
}
