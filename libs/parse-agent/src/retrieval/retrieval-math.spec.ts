import { LocalLexicalEmbedder } from '../ports/local-lexical-embedder';
import { reciprocalRankFusion } from './reciprocal-rank-fusion';
import { cosine, quantizeScore } from './score-quantize';
import { applyTokenBudget, estimateTokens } from './token-budget';

describe('LocalLexicalEmbedder (lexical, not semantic)', () => {
  const embedder = new LocalLexicalEmbedder({ dimensions: 256 });

  it('is deterministic and unit length', async () => {
    const a = await embedder.embed(['Refund my damaged parcel']);
    const b = await new LocalLexicalEmbedder({ dimensions: 256 }).embed([
      'Refund my damaged parcel',
    ]);
    expect(a.vectors).toEqual(b.vectors);
    expect(a.vectors[0]).toHaveLength(256);
    expect(Math.hypot(...a.vectors[0])).toBeCloseTo(1, 10);
    expect(a.usage.tokens).toBe(0);
  });

  it('scores shared words above no shared words, and knows no synonyms', () => {
    const q = embedder.vector('refund for a damaged parcel');
    const same = embedder.vector('the parcel arrived damaged, I want a refund');
    const other = embedder.vector('password reset link expired');
    const synonym = embedder.vector('reimbursement for a broken package');
    expect(cosine(q, same)).toBeGreaterThan(0.35);
    expect(Math.abs(cosine(q, other))).toBeLessThan(0.2);
    expect(Math.abs(cosine(q, synonym))).toBeLessThan(0.2);
  });

  it('names its settings in the model and refuses bad ones', () => {
    expect(new LocalLexicalEmbedder().model).toBe('local-lexical-v1-n2');
    expect(new LocalLexicalEmbedder({ maxNgram: 1 }).model).toBe('local-lexical-v1-n1');
    expect(() => new LocalLexicalEmbedder({ dimensions: 3 })).toThrow(/dimensions/);
    expect(() => new LocalLexicalEmbedder({ maxNgram: 9 })).toThrow(/maxNgram/);
  });

  it('embeds blank text as zeros (it matches nothing)', () => {
    expect(embedder.vector('  ').every((v) => v === 0)).toBe(true);
  });
});

describe('the token budget', () => {
  it('estimates multibyte text by bytes, ASCII by characters', () => {
    expect(estimateTokens('abcdefgh')).toBe(2);
    expect(estimateTokens('日本語のテキスト')).toBeGreaterThan(5);
  });

  it('keeps items in order while they fit, always the first, and counts the rest', () => {
    const items = ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)];
    expect(applyTokenBudget(items, 25, (s) => s)).toEqual({
      kept: items.slice(0, 2),
      dropped: 1,
      tokens: 20,
    });
    expect(applyTokenBudget(items, 1, (s) => s).kept).toEqual(items.slice(0, 1));
    expect(applyTokenBudget(items, 0, (s) => s).dropped).toBe(0);
  });
});

describe('scores', () => {
  it('quantizes to two decimals without -0', () => {
    expect(quantizeScore(0.123456)).toBe(0.12);
    expect(quantizeScore(0.999)).toBe(1);
    expect(Object.is(quantizeScore(-0.001), 0)).toBe(true);
  });

  it('fuses rankings by reciprocal rank, ties broken by id', () => {
    const fused = reciprocalRankFusion([
      ['a', 'b', 'c'],
      ['c', 'b', 'd'],
    ]);
    // c: 1/63 + 1/61 edges out b: 1/62 + 1/62.
    expect(fused.map((f) => f.id)).toEqual(['c', 'b', 'a', 'd']);
    expect(fused[1].score).toBeCloseTo(2 / 62, 10);
    expect(reciprocalRankFusion([['y'], ['x']]).map((f) => f.id)).toEqual(['x', 'y']);
  });
});
