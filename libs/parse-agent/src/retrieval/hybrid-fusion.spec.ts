import type { VectorSearchChunk } from '../ports/data-path';
import { fuseChunks } from './hybrid-fusion';

const c = (objectId: string, chunk: number, score: number): VectorSearchChunk => ({
  objectId,
  chunk,
  start: 0,
  end: 1,
  sourceHash: 'h',
  score,
});

describe('fuseChunks', () => {
  it('promotes what both rankings agree on, keeps k documents and a cap per document', () => {
    const vector = [c('a', 0, 0.9), c('b', 0, 0.8), c('c', 0, 0.7), c('a', 1, 0.6)];
    const keyword = [c('c', 0, 3), c('d', 0, 2), c('a', 1, 1)];
    const fused = fuseChunks(vector, keyword, 2, 1);
    // c#0 is 3rd and 1st, a#1 4th and 3rd, a#0 1st only.
    expect(fused.map((x) => `${x.objectId}#${x.chunk}`)).toEqual(['c#0', 'a#1']);
    expect(fused[0].score).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(fuseChunks(vector, [], 10, 5).map((x) => x.objectId)).toEqual(['a', 'b', 'c', 'a']);
  });
});
