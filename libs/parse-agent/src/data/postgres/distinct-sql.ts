import { AgentValidationError } from '../../core/errors';
import { columnRef } from './pg-identifiers';
import { SqlParams, type SqlQuery } from './sql-params';
import { scopedSource, visibleField, type SqlContext } from './scoped-source';
import { compileWhere, type Where } from './where-to-sql';

export interface DistinctInput {
  className: string;
  field: string;
  where?: Where;
  /** Default 1000. */
  limit?: number;
}

const DISTINCTABLE = new Set(['String', 'Number', 'Boolean', 'Date', 'Pointer', 'File', 'Array']);

/**
 * `distinct`: rows `{ value }`, sorted, without missing values. Array fields yield their elements
 * (as jsonb), as Parse and MongoDB do; Pointer fields yield objectIds.
 */
export function distinctSql(input: DistinctInput, ctx: SqlContext): SqlQuery {
  const params = new SqlParams();
  const source = scopedSource(input.className, ctx, params);
  const t = params.alias();
  const field = visibleField(source, input.field, 'distinct field');
  if (!DISTINCTABLE.has(field.type)) {
    throw new AgentValidationError(
      `distinct does not support ${field.type} fields ('${input.field}').`,
    );
  }
  const cond = compileWhere(input.where ?? {}, source, params, t);
  const limit = params.addCount(input.limit ?? 1000, 'limit', { min: 1 });
  const col = columnRef(input.field, t);
  if (field.type === 'Array') {
    return params.query(
      `SELECT DISTINCT e.value AS "value" FROM (${source.sql}) AS ${t} CROSS JOIN LATERAL ` +
        `jsonb_array_elements(CASE WHEN jsonb_typeof(${col}) = 'array' THEN ${col} ELSE '[]'::jsonb END) AS e(value) ` +
        `WHERE ${cond} ORDER BY 1 LIMIT ${limit}`,
    );
  }
  return params.query(
    `SELECT DISTINCT ${col} AS "value" FROM (${source.sql}) AS ${t} ` +
      `WHERE ${cond} AND ${col} IS NOT NULL ORDER BY 1 LIMIT ${limit}`,
  );
}
