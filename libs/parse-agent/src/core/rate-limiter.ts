import { DEFAULT_RATE_LIMIT, DEFAULT_RATE_WINDOW_SECONDS } from './constants';
import { RateLimitExceededError } from './errors';

/**
 * Decides whether one more tool call may run now. Throw RateLimitExceededError to refuse; any other
 * error is treated as a limiter failure and refused too (fail closed).
 */
export interface RateLimiter {
  check(key?: string): void | Promise<void>;
  readonly limit?: number;
  readonly window?: number;
}

/** In-process sliding window: at most `limit` calls in any `window` seconds. */
export class SlidingWindowRateLimiter implements RateLimiter {
  protected readonly stamps: number[] = [];

  constructor(
    readonly limit = DEFAULT_RATE_LIMIT,
    readonly window = DEFAULT_RATE_WINDOW_SECONDS,
    protected readonly now: () => number = () => Date.now(),
  ) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`rate limit must be a positive integer, got ${String(limit)}`);
    }
    if (!(window > 0))
      throw new RangeError(`rate window must be positive seconds, got ${String(window)}`);
  }

  check(): void {
    const now = this.now();
    const horizon = now - this.window * 1000;
    while (this.stamps.length && this.stamps[0] <= horizon) this.stamps.shift();
    if (this.stamps.length >= this.limit) {
      const retryAfter = Math.max(0.1, (this.stamps[0] + this.window * 1000 - now) / 1000);
      throw new RateLimitExceededError(Math.round(retryAfter * 100) / 100, this.limit, this.window);
    }
    this.stamps.push(now);
  }

  /** Calls left in the current window. */
  remaining(): number {
    const horizon = this.now() - this.window * 1000;
    return Math.max(0, this.limit - this.stamps.filter((t) => t > horizon).length);
  }
}

/**
 * Runs the limiter; a limiter that breaks for any reason other than a real limit refuses the call
 * with a randomized retry_after (1-5 s) so clients back off instead of hammering a broken store.
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
    throw new RateLimitExceededError(
      retryAfter,
      limiter.limit ?? DEFAULT_RATE_LIMIT,
      limiter.window ?? DEFAULT_RATE_WINDOW_SECONDS,
    );
  }
}

/**
 * One sliding window per key (the agent's identity), for limiters shared by many short-lived agents,
 * such as one agent per MCP request.
 */
export class KeyedSlidingWindowRateLimiter implements RateLimiter {
  protected readonly windows = new Map<string, SlidingWindowRateLimiter>();

  constructor(
    readonly limit = DEFAULT_RATE_LIMIT,
    readonly window = DEFAULT_RATE_WINDOW_SECONDS,
    protected readonly now: () => number = () => Date.now(),
  ) {
    new SlidingWindowRateLimiter(limit, window, now); // validates the numbers
  }

  check(key = 'default'): void {
    let limiter = this.windows.get(key);
    if (!limiter) {
      if (this.windows.size > 10_000) this.prune();
      limiter = new SlidingWindowRateLimiter(this.limit, this.window, this.now);
      this.windows.set(key, limiter);
    }
    limiter.check();
  }

  protected prune(): void {
    for (const [key, limiter] of this.windows)
      if (limiter.remaining() === this.limit) this.windows.delete(key);
  }
}
