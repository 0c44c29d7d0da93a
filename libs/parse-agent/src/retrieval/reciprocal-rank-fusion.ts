/** The usual RRF constant: dampens the weight of the very first ranks. */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion: each id scores the sum of 1 / (k + rank) over the rankings it appears
 * in (rank 1 first). Ties break by id so the order is stable. Returns ids best first with scores.
 */
export function reciprocalRankFusion(
  rankings: ReadonlyArray<readonly string[]>,
  k = RRF_K,
): Array<{ id: string; score: number }> {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, i) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + i + 1)));
  }
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
