import { AgentValidationError } from '../../core/errors';
import { EMBEDDING_TABLE, vectorLiteral } from './pg-embedding-table';
import { columnRef } from './pg-identifiers';
import { scopedSource, visibleField, type SqlContext } from './scoped-source';
import { SqlParams, type SqlQuery } from './sql-params';
import { compileWhere, type Where } from './where-to-sql';

export interface VectorSearchInput {
  className: string;
  /** The embedded text field: must be a column this reader can see. */
  field: string;
  vector: readonly number[];
  where?: Where;
  /** Documents to return. */
  k: number;
  /** Best chunks kept per document. */
  perDocument: number;
  storage: 'array' | 'pgvector';
  /**
   * pgvector: how many nearest chunks the index walk yields before documents are formed (the
   * caller derives it: `vectors.candidates`, see pg-vector-search.ts). Unused by the exact scan.
   */
  candidateChunks: number;
}

/**
 * The ranked chunks of the k best documents among the rows this reader may read: the scoped
 * source (row ACL, CLP, the library's scope) with the composed where applied to it FIRST, then
 * the side table's chunks of those rows only, scored by cosine (vectors are unit length, so the
 * dot product), documents ranked by their best chunk. Rows: object_id, chunk, chunk_start,
 * chunk_end, source_hash, score.
 *
 * Arrays: an exact scan (the dot product written out, see dotProductSql). pgvector: the HNSW index walks the class's chunks nearest first (an
 * iterative scan keeps walking past rows the filter drops), limited to `candidateChunks`.
 */
export function vectorSearchSql(input: VectorSearchInput, ctx: SqlContext): SqlQuery {
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
  const k = params.addCount(input.k, 'k', { min: 1, max: 1000 });
  const perDocument = params.addCount(input.perDocument, 'max_chunks_per_document', {
    min: 1,
    max: 1000,
  });
  const allowed = `SELECT ${columnRef('objectId', s)} AS object_id FROM (${source.sql}) AS ${s} WHERE ${cond}`;
  let scored: string;
  if (input.storage === 'pgvector') {
    const q = params.add(vectorLiteral(input.vector));
    const candidates = params.addCount(input.candidateChunks, 'candidates', {
      min: 1,
      max: 100_000,
    });
    scored =
      `SELECT e.object_id, e.chunk, e.chunk_start, e.chunk_end, e.source_hash, ` +
      `(1 - (e.embedding <=> ${q}::vector))::float8 AS score ` +
      `FROM ${EMBEDDING_TABLE} AS e ` +
      `WHERE e.class_name = ${className} AND e.field = ${fieldName} ` +
      `AND e.object_id IN (${allowed}) ` +
      `ORDER BY e.embedding <=> ${q}::vector LIMIT ${candidates}`;
  } else {
    const q = params.add(input.vector.map((v) => (Number.isFinite(v) ? v : 0)));
    // The query as float8 once (OFFSET 0 keeps the subquery a single evaluated row), and each
    // stored vector detoasted once per row (array_cat returns a flat copy; read in place, every
    // subscript would fetch a TOASTed vector again). The dot product is then one expression.
    scored =
      `SELECT e.object_id, e.chunk, e.chunk_start, e.chunk_end, e.source_hash, ` +
      `coalesce(${dotProductSql('v.x', 'qv.q', input.vector.length)}, 0) AS score ` +
      `FROM ${EMBEDDING_TABLE} AS e JOIN (${allowed}) AS r ON r.object_id = e.object_id ` +
      `CROSS JOIN (SELECT ${q}::real[]::float8[] AS q OFFSET 0) AS qv ` +
      `CROSS JOIN LATERAL (SELECT array_cat(e.embedding, '{}'::real[]) AS x OFFSET 0) AS v ` +
      `WHERE e.class_name = ${className} AND e.field = ${fieldName}`;
  }
  return params.query(
    `WITH scored AS (${scored}), ` +
      `docs AS (SELECT object_id, max(score) AS best FROM scored GROUP BY object_id ` +
      `ORDER BY best DESC, object_id ASC LIMIT ${k}), ` +
      `ranked AS (SELECT c.*, d.best, row_number() OVER (PARTITION BY c.object_id ` +
      `ORDER BY c.score DESC, c.chunk ASC) AS rn FROM scored c JOIN docs d ON d.object_id = c.object_id) ` +
      `SELECT object_id, chunk, chunk_start, chunk_end, source_hash, score, best FROM ranked ` +
      `WHERE rn <= ${perDocument} ORDER BY best DESC, object_id ASC, score DESC, chunk ASC`,
  );
}

/** Terms summed in one nested expression at most (PostgreSQL's parser recurses on each `+`). */
const TERMS_PER_SUM = 1024;

/**
 * `stored . query` over `dimensions` elements as one SQL expression: `s[1]::float8 * q[1] + ...`,
 * left to right in blocks of TERMS_PER_SUM (the block sums then added in order). The same products
 * in the same order as summing `unnest(stored, query)`, for up to TERMS_PER_SUM dimensions, without
 * a row per element: about three times faster on PostgreSQL. Only indexes are written into the
 * text; the values come from the two array columns.
 */
function dotProductSql(stored: string, query: string, dimensions: number): string {
  const blocks: string[] = [];
  for (let from = 1; from <= dimensions; from += TERMS_PER_SUM) {
    const terms: string[] = [];
    for (let i = from; i < Math.min(dimensions + 1, from + TERMS_PER_SUM); i++) {
      terms.push(`${stored}[${i}]::float8*${query}[${i}]`);
    }
    blocks.push(`(${terms.join('+')})`);
  }
  return blocks.length ? blocks.join('+') : '0::float8';
}
