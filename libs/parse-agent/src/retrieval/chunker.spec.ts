import { chunkText, textHash } from './chunker';

describe('chunkText', () => {
  const text = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');

  it('covers the text in windows of at most size characters that overlap and start at a word', () => {
    const { chunks, capped } = chunkText(text, { size: 120, overlap: 30, maxPerDocument: 1000 });
    expect(capped).toBe(false);
    expect(chunks[0].start).toBe(0);
    expect(chunks[chunks.length - 1].end).toBe(text.length);
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i];
      expect(c.end - c.start).toBeLessThanOrEqual(120);
      expect(c.text).toBe(text.slice(c.start, c.end));
      if (i > 0) {
        expect(c.start).toBeLessThan(chunks[i - 1].end); // overlap
        expect(c.start).toBeGreaterThan(chunks[i - 1].start); // progress
        expect(text[c.start - 1]).toBe(' '); // starts at a word
      }
    }
  });

  it('stops at maxPerDocument and says the end was left out', () => {
    const { chunks, capped } = chunkText(text, { size: 100, overlap: 10, maxPerDocument: 3 });
    expect(chunks).toHaveLength(3);
    expect(capped).toBe(true);
  });

  it('gives blank text no chunks, and a text without spaces hard cuts', () => {
    expect(chunkText('   ', { size: 10, overlap: 2, maxPerDocument: 5 }).chunks).toEqual([]);
    const solid = chunkText('x'.repeat(25), { size: 10, overlap: 2, maxPerDocument: 5 });
    expect(solid.chunks.map((c) => [c.start, c.end])).toEqual([
      [0, 10],
      [8, 18],
      [16, 25],
    ]);
  });

  it('hashes texts stably and tells them apart', () => {
    expect(textHash('abc')).toBe(textHash('abc'));
    expect(textHash('abc')).not.toBe(textHash('abd'));
    expect(textHash('')).toMatch(/^[0-9a-f]{16}$/);
  });
});
