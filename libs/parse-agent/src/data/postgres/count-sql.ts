import { SqlParams, type SqlQuery } from './sql-params';
import { scopedSource, type SqlContext } from './scoped-source';
import { compileWhere, type Where } from './where-to-sql';

/** A real count (never the planner's estimate) of the rows the reader may read: `{ count: number }`. */
export function countSql(input: { className: string; where?: Where }, ctx: SqlContext): SqlQuery {
  const params = new SqlParams();
  const source = scopedSource(input.className, ctx, params);
  const t = params.alias();
  const cond = compileWhere(input.where ?? {}, source, params, t);
  return params.query(
    `SELECT count(*)::float8 AS "count" FROM (${source.sql}) AS ${t} WHERE ${cond}`,
  );
}
