import { DEFAULT_RATE_LIMIT, DEFAULT_RATE_WINDOW_SECONDS } from '../core/constants';
import { RateLimitExceededError, RateLimiterUnavailableError } from '../core/errors';

/**
 * Decides whether one more tool call may run now. Throw RateLimitExceededError to refuse; any other
 * error is treated as a limiter failure and refused too (fail closed).
 */
export interface RateLimiter {
  check(key?: string): void | Promise<void>;
  readonly limit?: number;
  readonly window?: number;
}

/** Injection token for the RateLimiter agents share (the nestjs/throttler pattern). */
export const RateLimiter = Symbol('RateLimiter');

/**
 * Runs the limiter; a limiter that breaks for any reason other than a real limit refuses the call
 * (RateLimiterUnavailableError: HTTP answers 503, not 429) with a randomized retry_after (1-5 s)
 * so clients back off instead of hammering a broken store.
 */
export async function checkRateLimit(
  limiter: RateLimiter,
  key: string | undefined,
  onFailure: (error: unknown) => void,
): Promise<void> {
  try {
    await limiter.check(key);
  } catch (error) {
    if (error instanceof RateLimitExceededError) throw error;
    onFailure(error);
    const retryAfter = Math.round((1 + Math.random() * 4) * 100) / 100;
    throw new RateLimiterUnavailableError(
      retryAfter,
      limiter.limit ?? DEFAULT_RATE_LIMIT,
      limiter.window ?? DEFAULT_RATE_WINDOW_SECONDS,
    );
  }
}

/** True for an object that implements the RateLimiter port (a `check` method). */
export function isRateLimiter(value: unknown): value is RateLimiter {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { check?: unknown }).check === 'function'
  );
}
