import { DEFAULT_RATE_LIMIT, DEFAULT_RATE_WINDOW_SECONDS } from '../core/constants';
import { RateLimitExceededError } from '../core/errors';
import type { RateLimiter } from './rate-limiter';

/**
 * In-process sliding window: at most `limit` calls in any `window` seconds. The call times are
 * kept in arrival order and expire from the front by moving a start index, so a call costs the
 * same with ten calls in the window as with a hundred thousand (an `Array.shift` per call would
 * move the whole window each time).
 */
export class SlidingWindowRateLimiter implements RateLimiter {
  protected readonly stamps: number[] = [];
  /** Index of the oldest call still in the window; entries before it have expired. */
  protected start = 0;

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
    this.expire(now);
    if (this.stamps.length - this.start >= this.limit) {
      const oldest = this.stamps[this.start];
      const retryAfter = Math.max(0.1, (oldest + this.window * 1000 - now) / 1000);
      throw new RateLimitExceededError(Math.round(retryAfter * 100) / 100, this.limit, this.window);
    }
    this.stamps.push(now);
  }

  /** Calls left in the current window. */
  remaining(): number {
    this.expire(this.now());
    return Math.max(0, this.limit - (this.stamps.length - this.start));
  }

  protected expire(now: number): void {
    const horizon = now - this.window * 1000;
    const stamps = this.stamps;
    let start = this.start;
    while (start < stamps.length && stamps[start] <= horizon) start++;
    // Drop the expired prefix once it is at least half the array: amortized O(1) per call.
    if (start > 0 && start * 2 >= stamps.length) {
      stamps.splice(0, start);
      start = 0;
    }
    this.start = start;
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
