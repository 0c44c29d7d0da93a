import { RateLimitExceededError } from '../core/errors';
import { EmbeddingSpendCap } from './embedding-spend-cap';

describe('EmbeddingSpendCap', () => {
  it('caps each tenant over a sliding window and says when to retry', () => {
    let now = 1_000_000;
    const cap = new EmbeddingSpendCap({ maxTokens: 10, windowSeconds: 60 }, () => now);
    cap.charge('acme', 6);
    now += 20_000;
    cap.charge('acme', 4);
    cap.charge('globex', 10);
    let error: unknown;
    try {
      cap.charge('acme', 1);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RateLimitExceededError);
    // The first 6 tokens leave the window 40 s from now.
    expect((error as RateLimitExceededError).retryAfter).toBeCloseTo(40, 5);
    expect((error as RateLimitExceededError).limit).toBe(10);
    now += 40_001;
    expect(() => cap.charge('acme', 6)).not.toThrow();
    expect(() => cap.charge('acme', 1)).toThrow(RateLimitExceededError);
  });

  it('refuses a charge larger than the cap, and bad settings', () => {
    const cap = new EmbeddingSpendCap({ maxTokens: 5, windowSeconds: 1 });
    expect(() => cap.charge('t', 6)).toThrow(RateLimitExceededError);
    expect(() => new EmbeddingSpendCap({ maxTokens: 0, windowSeconds: 1 })).toThrow(RangeError);
  });
});
