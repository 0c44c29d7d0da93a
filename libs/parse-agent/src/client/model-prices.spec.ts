import { costOf, DEFAULT_MODEL_PRICES, priceFor, validatePriceTable } from './model-prices';

describe('model prices', () => {
  it('finds a model by exact name and a dated snapshot by its base name', () => {
    expect(priceFor('gpt-4o-mini', DEFAULT_MODEL_PRICES)).toEqual({ input: 0.15, output: 0.6 });
    expect(priceFor('gpt-4o-mini-2024-07-18', DEFAULT_MODEL_PRICES)).toEqual({
      input: 0.15,
      output: 0.6,
    });
    expect(priceFor('gpt-4o-2024-08-06', DEFAULT_MODEL_PRICES)).toEqual({ input: 2.5, output: 10 });
    expect(priceFor('claude-haiku-4-5-20251001', DEFAULT_MODEL_PRICES)).toEqual({
      input: 1,
      output: 5,
    });
  });

  it('does not price a different product that merely shares a prefix, nor an unknown model', () => {
    expect(priceFor('gpt-4o-audio-preview', DEFAULT_MODEL_PRICES)).toBeUndefined();
    expect(priceFor('qwen2.5-7b-instruct', DEFAULT_MODEL_PRICES)).toBeUndefined();
    expect(priceFor('toString', DEFAULT_MODEL_PRICES)).toBeUndefined();
  });

  it('computes cost per million tokens, and null (not zero) when the price is unknown', () => {
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 0 }, { input: 3, output: 15 })).toBe(3);
    expect(
      costOf({ inputTokens: 84, outputTokens: 120 }, { input: 0.15, output: 0.6 }),
    ).toBeCloseTo((84 * 0.15 + 120 * 0.6) / 1e6, 12);
    expect(costOf({ inputTokens: 10, outputTokens: 10 }, undefined)).toBeNull();
  });

  it('rejects a malformed user price table with a message that shows the expected shape', () => {
    expect(() => validatePriceTable({ mine: { input: 1 } })).toThrow(
      /pricing\['mine'\].*input, output/,
    );
    expect(() => validatePriceTable({ mine: { input: -1, output: 2 } })).toThrow(TypeError);
    expect(validatePriceTable({ mine: { input: 1, output: 2 } })).toEqual({
      mine: { input: 1, output: 2 },
    });
  });
});
