import { ParseAgentConfigError } from '../../core/errors';
import type {
  DataRow,
  VectorSearchChunk,
  VectorSearchResult,
  VectorSearchSpec,
} from '../../ports/data-path';
import {
  EmbeddingModelMismatchError,
  type EmbeddingModelRecord,
} from '../../ports/embedding-store';
import type { RunQuery } from './pg-read-transaction';
import { apiRow } from './pg-row-shape';
import type { PgField } from './pg-schema';
import type { SqlContext } from './scoped-source';
import { selectSql } from './select-sql';
import { vectorSearchSql } from './vector-search-sql';
import { keywordSearchSql } from './keyword-search-sql';

function chunkOf(r: Record<string, unknown>): VectorSearchChunk {
  return {
    objectId: String(r.object_id),
    chunk: Number(r.chunk),
    start: Number(r.chunk_start),
    end: Number(r.chunk_end),
    sourceHash: String(r.source_hash),
    score: Number(r.score),
  };
}

/** Fields Parse always returns with a row. */
const ALWAYS = ['objectId', 'createdAt', 'updatedAt'];

/**
 * Runs a vector search inside the path's read transaction: the ranked chunks (ACL, CLP, scope and
 * the composed where applied before ranking), then their parent rows read through the same scope.
 */
export async function vectorSearchOn(
  className: string,
  spec: VectorSearchSpec,
  record: EmbeddingModelRecord | undefined,
  scope: {
    ctx: SqlContext;
    fields: Readonly<Record<string, PgField>>;
    run: RunQuery;
    /** pgvector: the configured HNSW search width (`vectors.efSearch`). */
    efSearch: number;
    /** pgvector: chunks the index walk yields (`vectors.candidates`; unset: derived). */
    candidates?: number;
  },
): Promise<VectorSearchResult> {
  if (!record) {
    throw new ParseAgentConfigError(
      `No vectors are stored yet, so ${className} cannot be searched by meaning. Run \`parse-agent embed ${className}\` (or call the indexer from the save path) first.`,
    );
  }
  if (spec.vector.length !== record.dimensions) {
    throw new EmbeddingModelMismatchError(record, {
      model: 'the query embedder',
      dimensions: spec.vector.length,
    });
  }
  const { ctx, run } = scope;
  // pgvector: the width of the HNSW walk, at least the chunks asked for (pgvector's cap is 1000).
  const searchWidth = Math.min(1000, Math.max(scope.efSearch, spec.k * spec.maxChunksPerDocument));
  // pgvector: the chunks the walk yields before exact ranking, never fewer than asked for; by
  // default as many as the search width (ten a document asked for if more). The rows the filter
  // drops do not count, so the iterative scan keeps walking the graph past its first ef_search
  // candidates, which finds more of the true nearest (bench:semantic measures it).
  const candidateChunks = Math.max(
    scope.candidates ?? Math.max(searchWidth, spec.k * spec.maxChunksPerDocument * 10),
    spec.k * spec.maxChunksPerDocument,
  );
  if (record.storage === 'pgvector') {
    // pgvector 0.8+: keep walking the index past chunks the filter drops (a no-op setting before).
    // relaxed_order may yield chunks slightly out of order: the SQL ranks the candidates again by
    // their exact distance (vectorSearchSql's outer query), so only which chunks were found is
    // approximate, not their order.
    await run({
      text: `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true)`,
      values: [String(searchWidth)],
    });
  } else {
    // The exact scan is one long expression a row: JIT compiling it costs more than it saves.
    await run({ text: `SELECT set_config('jit', 'off', true)`, values: [] });
  }
  const ranked = await run(
    vectorSearchSql(
      {
        className,
        field: spec.field,
        vector: spec.vector,
        where: spec.where,
        k: spec.k,
        perDocument: spec.maxChunksPerDocument,
        storage: record.storage,
        candidateChunks,
      },
      ctx,
    ),
  );
  const chunks = ranked.map(chunkOf);
  let keywordChunks: VectorSearchChunk[] | undefined;
  if (spec.mode === 'hybrid' && spec.text) {
    const keyword = await run(
      keywordSearchSql(
        {
          className,
          field: spec.field,
          text: spec.text,
          where: spec.where,
          limit: spec.k * spec.maxChunksPerDocument,
        },
        ctx,
      ),
    );
    keywordChunks = keyword.map(chunkOf);
  }
  const ids = [...new Set([...chunks, ...(keywordChunks ?? [])].map((c) => c.objectId))];
  let rows: DataRow[] = [];
  if (ids.length) {
    const visible = ctx.columnsFor(className);
    const wanted = spec.keys?.length
      ? new Set([...ALWAYS, spec.field, ...spec.keys.map((k) => k.split('.')[0])])
      : undefined;
    const fetched = await run(
      selectSql(
        {
          className,
          columns: wanted ? visible.filter((c) => wanted.has(c)) : [...visible],
          where: spec.where
            ? { $and: [{ objectId: { $in: ids } }, spec.where] }
            : { objectId: { $in: ids } },
          limit: ids.length,
        },
        ctx,
      ),
    );
    const byId = new Map(fetched.map((r) => [String(r.objectId), apiRow(r, scope.fields)]));
    rows = ids.map((id) => byId.get(id)).filter((r): r is DataRow => r !== undefined);
  }
  // A chunk whose row the second read did not return (deleted in between) is not shown.
  const kept = new Set(rows.map((r) => String(r.objectId)));
  return {
    chunks: chunks.filter((c) => kept.has(c.objectId)),
    ...(keywordChunks ? { keywordChunks: keywordChunks.filter((c) => kept.has(c.objectId)) } : {}),
    rows,
    ...(record.storage === 'pgvector'
      ? { method: 'hnsw' as const, searchWidth, walkedChunks: candidateChunks }
      : { method: 'exact' as const }),
  };
}
