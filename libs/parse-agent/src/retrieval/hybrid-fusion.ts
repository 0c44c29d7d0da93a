import type { VectorSearchChunk } from '../ports/data-path';
import { reciprocalRankFusion } from './reciprocal-rank-fusion';

/**
 * Hybrid search's answer: the vector and the keyword rankings of chunks fused by reciprocal rank
 * (a chunk's score is its RRF score), documents ranked by their best fused chunk, the first `k`
 * documents kept with at most `perDocument` chunks each, best first.
 */
export function fuseChunks(
  vector: readonly VectorSearchChunk[],
  keyword: readonly VectorSearchChunk[],
  k: number,
  perDocument: number,
): VectorSearchChunk[] {
  const key = (c: VectorSearchChunk) => `${c.objectId}#${c.chunk}`;
  const byKey = new Map<string, VectorSearchChunk>();
  for (const c of [...vector, ...keyword]) if (!byKey.has(key(c))) byKey.set(key(c), c);
  const vectorRanking = [...vector].sort((a, b) => b.score - a.score).map(key);
  const fused = reciprocalRankFusion([vectorRanking, keyword.map(key)]);
  const documents = new Set<string>();
  const perDoc = new Map<string, number>();
  const out: VectorSearchChunk[] = [];
  for (const { id, score } of fused) {
    const chunk = byKey.get(id)!;
    if (!documents.has(chunk.objectId)) {
      if (documents.size >= k) continue;
      documents.add(chunk.objectId);
    }
    const n = perDoc.get(chunk.objectId) ?? 0;
    if (n >= perDocument) continue;
    perDoc.set(chunk.objectId, n + 1);
    out.push({ ...chunk, score });
  }
  return out;
}
