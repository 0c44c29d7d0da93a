import { AgentValidationError } from '../../core/errors';
import { columnRef } from './pg-identifiers';
import type { PgField } from './pg-schema';
import { SqlParams, type SqlQuery } from './sql-params';
import { scopedSource, visibleField, type ScopedSource, type SqlContext } from './scoped-source';
import { compileWhere, type Where } from './where-to-sql';

export type GroupAccumulator = 'count' | 'sum' | 'avg' | 'min' | 'max';
export const GROUP_ACCUMULATORS: readonly GroupAccumulator[] = [
  'count',
  'sum',
  'avg',
  'min',
  'max',
];

/** Rows come back as `{ key, value }`; `key` describes the key column (a Pointer key is an objectId). */
export interface GroupedSqlQuery extends SqlQuery {
  key: { field: string; type: string; targetClass?: string };
}

export interface GroupValue {
  /** Default `count`. */
  accumulator?: GroupAccumulator;
  /** The field summed, averaged or compared; not used by `count`. */
  valueField?: string;
}

export type GroupOrder = 'value_desc' | 'value_asc' | 'key_asc' | 'key_desc';

/** ORDER BY for groups: fixed SQL chosen from this table (ties broken by key, as on MongoDB). */
export const GROUP_ORDER_SQL: Record<GroupOrder, string> = {
  value_desc: '"value" DESC NULLS LAST, "key" ASC NULLS FIRST',
  value_asc: '"value" ASC NULLS FIRST, "key" ASC NULLS FIRST',
  key_asc: '"key" ASC NULLS FIRST',
  key_desc: '"key" DESC NULLS LAST',
};

export function groupOrderSql(order: unknown, fallback: GroupOrder): string {
  const key = order ?? fallback;
  if (typeof key !== 'string' || !Object.prototype.hasOwnProperty.call(GROUP_ORDER_SQL, key)) {
    throw new AgentValidationError(
      `Unknown sort ${JSON.stringify(key)}. Use one of: ${Object.keys(GROUP_ORDER_SQL).join(', ')}.`,
    );
  }
  return GROUP_ORDER_SQL[key as GroupOrder];
}

export interface GroupByInput extends GroupValue {
  className: string;
  field: string;
  where?: Where;
  /** Default 100. */
  limit?: number;
  /** Default value_desc. */
  sort?: GroupOrder;
}

const GROUPABLE = new Set([
  'String',
  'Number',
  'Boolean',
  'Date',
  'Pointer',
  'File',
  'Object',
  'Array',
]);
const VALUE_TYPES: Record<GroupAccumulator, readonly string[]> = {
  count: [],
  sum: ['Number'],
  avg: ['Number'],
  min: ['Number', 'Date', 'String'],
  max: ['Number', 'Date', 'String'],
};

/** `count(*)`, `sum(x)`, ... over the visible value field, as one SQL aggregate expression. */
export function accumulatorSql(input: GroupValue, source: ScopedSource, alias: string): string {
  const acc = input.accumulator ?? 'count';
  if (!GROUP_ACCUMULATORS.includes(acc)) {
    throw new AgentValidationError(
      `Unknown accumulator '${String(acc)}'. Use one of: ${GROUP_ACCUMULATORS.join(', ')}.`,
    );
  }
  if (acc === 'count') return 'count(*)::float8';
  if (typeof input.valueField !== 'string') {
    throw new AgentValidationError(`The '${acc}' accumulator needs a value field.`);
  }
  const field = visibleField(source, input.valueField, 'value field');
  if (!VALUE_TYPES[acc].includes(field.type)) {
    throw new AgentValidationError(
      `'${acc}' works on ${VALUE_TYPES[acc].join(' or ')} fields; '${input.valueField}' is ${field.type}.`,
    );
  }
  const col = columnRef(input.valueField, alias);
  // MongoDB's $sum of nothing is 0, not null.
  if (acc === 'sum') return `COALESCE(sum(${col}), 0)::float8`;
  if (acc === 'avg') return `avg(${col})::float8`;
  return `${acc}(${col})`;
}

export function groupKeyField(source: ScopedSource, name: string): PgField {
  const field = visibleField(source, name, 'group field');
  if (!GROUPABLE.has(field.type)) {
    throw new AgentValidationError(
      `Cannot group by '${name}': ${field.type} fields are not groupable.`,
    );
  }
  return field;
}

/**
 * `group_by`: one row per distinct value of `field` (missing values form the null group), with the
 * accumulated value, largest first (ties by key), at most `limit` groups.
 */
export function groupBySql(input: GroupByInput, ctx: SqlContext): GroupedSqlQuery {
  const params = new SqlParams();
  const source = scopedSource(input.className, ctx, params);
  const t = params.alias();
  const keyField = groupKeyField(source, input.field);
  const value = accumulatorSql(input, source, t);
  const cond = compileWhere(input.where ?? {}, source, params, t);
  const limit = params.addCount(input.limit ?? 100, 'limit', { min: 1 });
  const key = columnRef(input.field, t);
  const text =
    `SELECT ${key} AS "key", ${value} AS "value" FROM (${source.sql}) AS ${t} WHERE ${cond} ` +
    `GROUP BY ${key} ORDER BY ${groupOrderSql(input.sort, 'value_desc')} LIMIT ${limit}`;
  return {
    ...params.query(text),
    key: { field: input.field, type: keyField.type, targetClass: keyField.targetClass },
  };
}
