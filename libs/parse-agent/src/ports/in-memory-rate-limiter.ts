import { DEFAULT_RATE_LIMIT, DEFAULT_RATE_WINDOW_SECONDS } from '../core/constants';
import { RateLimitExceededError } from '../core/errors';
import type { RateLimiter } from './rate-limiter';

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
