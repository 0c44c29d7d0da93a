import { AgentValidationError } from '../../core/errors';
import { EMBEDDING_TABLE } from './pg-embedding-table';
import { columnRef } from './pg-identifiers';
import { scopedSource, visibleField, type SqlContext } from './scoped-source';
import { SqlParams, type SqlQuery } from './sql-params';
import { compileWhere, type Where } from './where-to-sql';

export interface KeywordSearchInput {
  className: string;
  field: string;
  text: string;
  where?: Where;
  /** Chunks to return, best first. */
  limit: number;
}

/**
 * The keyword half of hybrid search: PostgreSQL full-text ranking (`ts_rank_cd`, English stemming)
 * of each stored chunk's span of the row's current text, among the rows this reader may read and
 * the composed where matches (applied first, as for the vector half). Rows: object_id, chunk,
 * chunk_start, chunk_end, source_hash, score.
 */
export function keywordSearchSql(input: KeywordSearchInput, ctx: SqlContext): SqlQuery {
  const params = new SqlParams();
  const source = scopedSource(input.className, ctx, params);
  const field = visibleField(source, input.field, 'text_field');
  if (field.type !== 'String') {
    throw new AgentValidationError(`text_field: '${input.field}' is not a String field.`);
  }
  const s = params.alias('s');
  const cond = compileWhere(input.where ?? {}, source, params, s);
  const className = params.add(input.className);
  const fieldName = params.add(input.field);
  const text = params.add(input.text);
  const limit = params.addCount(input.limit, 'limit', { min: 1, max: 10_000 });
  const span = `substr(a.body, e.chunk_start + 1, e.chunk_end - e.chunk_start)`;
  return params.query(
    `WITH allowed AS (SELECT ${columnRef('objectId', s)} AS object_id, ${columnRef(input.field, s)} AS body ` +
      `FROM (${source.sql}) AS ${s} WHERE ${cond}), ` +
      `q AS (SELECT plainto_tsquery('english', ${text}) AS query) ` +
      `SELECT e.object_id, e.chunk, e.chunk_start, e.chunk_end, e.source_hash, ` +
      `ts_rank_cd(to_tsvector('english', ${span}), q.query)::float8 AS score ` +
      `FROM ${EMBEDDING_TABLE} AS e JOIN allowed AS a ON a.object_id = e.object_id CROSS JOIN q ` +
      `WHERE e.class_name = ${className} AND e.field = ${fieldName} ` +
      `AND to_tsvector('english', ${span}) @@ q.query ` +
      `ORDER BY score DESC, e.object_id ASC, e.chunk ASC LIMIT ${limit}`,
  );
}
