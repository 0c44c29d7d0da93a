import type { VectorSearchChunk } from '../ports/data-path';

/** One candidate chunk with its vector (embedded on the fly on the Parse REST path). */
export interface CandidateChunk extends Omit<VectorSearchChunk, 'score'> {
  vector: readonly number[];
}

/** Cosine similarity (0 when either vector is all zeros). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * (b[i] ?? 0);
    na += a[i] * a[i];
    nb += (b[i] ?? 0) * (b[i] ?? 0);
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Exact ranking of a candidate set, as the SQL paths rank theirs: every chunk scored by cosine to
 * the query, documents ranked by their best chunk (ties by objectId), the k best documents kept
 * with their `perDocument` best chunks (ties by position). Chunks come out best first.
 */
export function rankCandidates(
  query: readonly number[],
  candidates: readonly CandidateChunk[],
  k: number,
  perDocument: number,
): VectorSearchChunk[] {
  const byDoc = new Map<string, VectorSearchChunk[]>();
  for (const { vector, ...chunk } of candidates) {
    const scored = { ...chunk, score: cosine(query, vector) };
    const list = byDoc.get(chunk.objectId);
    if (list) list.push(scored);
    else byDoc.set(chunk.objectId, [scored]);
  }
  const docs = [...byDoc.entries()].map(([id, chunks]) => {
    chunks.sort((a, b) => b.score - a.score || a.chunk - b.chunk);
    return { id, best: chunks[0].score, chunks: chunks.slice(0, perDocument) };
  });
  docs.sort((a, b) => b.best - a.best || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return docs
    .slice(0, k)
    .flatMap((d) => d.chunks)
    .sort((a, b) => b.score - a.score || (a.objectId < b.objectId ? -1 : 1) || a.chunk - b.chunk);
}
