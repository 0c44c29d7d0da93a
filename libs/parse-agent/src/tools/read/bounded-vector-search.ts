import { AgentValidationError } from '../../core/errors';
import type { DataRow, VectorSearchResult, VectorSearchSpec } from '../../ports/data-path';
import { type CandidateChunk, rankCandidates } from '../../retrieval/bounded-rank';
import { chunkText, textHash } from '../../retrieval/chunker';
import type { PlannedRead, ReadRequest } from '../../security/read-policy';

/** Rows read per page of the candidate scan. */
const PAGE = 100;
/** The most candidate rows any call may ask for. */
export const MAX_CANDIDATE_LIMIT = 5_000;

/** What the bounded search reads through: the policed reader's own `find`. */
export interface BoundedReader {
  find(
    className: string,
    request: Pick<ReadRequest, 'where' | 'keys'> & {
      newestFirst: boolean;
      limit: number;
      skip: number;
    },
  ): Promise<{ rows: DataRow[]; plan: PlannedRead }>;
}

export interface BoundedSearchInput
  extends Pick<ReadRequest, 'where' | 'keys'>, Omit<VectorSearchSpec, 'where' | 'keys'> {
  /** How the class splits text (its @AgentSearchable chunking). */
  chunking: { size: number; overlap: number; maxPerDocument: number };
  /** Vectors of the candidates' chunk texts (charged to the caller). */
  embedCandidates: (texts: string[]) => Promise<number[][]>;
}

/**
 * Exact cosine over a bounded candidate set, for an app with no direct database path (Parse REST
 * only: no stored vectors can be read). The newest `candidateLimit` rows the caller's where
 * matches are read with `find`, that is with the agent's own identity and every rule of a read
 * (ACL, CLP, tenant, canonical filter, agent filters, allowlist, redaction); their text field is
 * chunked as the indexer would and embedded on the fly, and the chunks ranked in the process.
 * The result says how many rows were considered and whether the class held more.
 */
export async function boundedVectorSearch(
  reader: BoundedReader,
  className: string,
  input: BoundedSearchInput,
): Promise<VectorSearchResult & { plan?: PlannedRead }> {
  if (input.mode === 'hybrid') {
    throw new AgentValidationError(
      "mode 'hybrid' needs the direct PostgreSQL path; on Parse REST use mode 'vector'.",
    );
  }
  const limit = input.candidateLimit ?? 500;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CANDIDATE_LIMIT) {
    throw new AgentValidationError(
      `The candidate bound must be an integer from 1 to ${MAX_CANDIDATE_LIMIT} (got ${String(limit)}).`,
    );
  }
  const keys = Array.isArray(input.keys)
    ? [...new Set([...(input.keys as unknown[]), input.field])]
    : input.keys;
  const rows: DataRow[] = [];
  let plan: PlannedRead | undefined;
  // One row past the bound tells whether the class holds more than was considered.
  while (rows.length <= limit) {
    const want = Math.min(PAGE, limit + 1 - rows.length);
    const page = await reader.find(className, {
      where: input.where,
      keys,
      newestFirst: true,
      limit: want,
      skip: rows.length,
    });
    plan ??= page.plan;
    rows.push(...page.rows);
    if (page.rows.length < want) break;
  }
  const exhausted = rows.length <= limit;
  const considered = rows.slice(0, limit);
  const texts: string[] = [];
  const meta: Array<Omit<CandidateChunk, 'vector'>> = [];
  for (const row of considered) {
    const text = row[input.field];
    if (typeof text !== 'string') continue;
    const sourceHash = textHash(text);
    for (const c of chunkText(text, input.chunking).chunks) {
      texts.push(c.text);
      meta.push({
        objectId: String(row.objectId),
        chunk: c.index,
        start: c.start,
        end: c.end,
        sourceHash,
      });
    }
  }
  const vectors = texts.length ? await input.embedCandidates(texts) : [];
  const chunks = rankCandidates(
    input.vector,
    meta.map((m, i) => ({ ...m, vector: vectors[i] })),
    input.k,
    input.maxChunksPerDocument,
  );
  const order = [...new Set(chunks.map((c) => c.objectId))];
  const byId = new Map(considered.map((r) => [String(r.objectId), r]));
  return {
    chunks,
    rows: order.map((id) => byId.get(id)!),
    method: 'bounded',
    candidates: { scanned: considered.length, limit, exhausted },
    ...(plan ? { plan } : {}),
  };
}
