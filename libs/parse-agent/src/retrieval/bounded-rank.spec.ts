import { cosine, rankCandidates, type CandidateChunk } from './bounded-rank';

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('rankCandidates (the Parse REST path: exact ranking in the process)', () => {
  it('equals a naive oracle: documents by best chunk, k documents, their best chunks', () => {
    const rand = random(35);
    for (let run = 0; run < 50; run++) {
      const dims = 2 + Math.floor(rand() * 6);
      const vec = () => Array.from({ length: dims }, () => rand() * 2 - 1);
      const candidates: CandidateChunk[] = [];
      const docs = 1 + Math.floor(rand() * 15);
      for (let d = 0; d < docs; d++) {
        const chunks = 1 + Math.floor(rand() * 4);
        for (let c = 0; c < chunks; c++) {
          candidates.push({
            objectId: `o${d}`,
            chunk: c,
            start: 0,
            end: 1,
            sourceHash: 'h',
            vector: vec(),
          });
        }
      }
      const query = vec();
      const k = 1 + Math.floor(rand() * 6);
      const per = 1 + Math.floor(rand() * 3);
      const got = rankCandidates(query, candidates, k, per);
      // Oracle: every chunk scored, documents' best chunk, top k documents.
      const scored = candidates.map((c) => ({
        id: c.objectId,
        chunk: c.chunk,
        s: cosine(query, c.vector),
      }));
      const best = new Map<string, number>();
      for (const c of scored) best.set(c.id, Math.max(best.get(c.id) ?? -Infinity, c.s));
      const topDocs = [...best].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, k);
      const keep = new Set(topDocs.map(([id]) => id));
      expect(new Set(got.map((c) => c.objectId))).toEqual(keep);
      for (const [id] of topDocs) {
        const mine = scored
          .filter((c) => c.id === id)
          .sort((a, b) => b.s - a.s)
          .slice(0, per);
        expect(got.filter((c) => c.objectId === id).map((c) => c.score)).toEqual(
          mine.map((c) => c.s),
        );
      }
      for (let i = 1; i < got.length; i++)
        expect(got[i - 1].score).toBeGreaterThanOrEqual(got[i].score);
      // Never a chunk of a document outside the candidates, never more than k documents.
      expect(keep.size).toBeLessThanOrEqual(k);
    }
  });

  it('scores a zero vector 0 rather than NaN', () => {
    expect(cosine([0, 0], [1, 0])).toBe(0);
    expect(cosine([1, 0], [1, 0])).toBeCloseTo(1);
  });
});
