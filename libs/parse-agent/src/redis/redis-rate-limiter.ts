import { createHash, randomBytes } from 'node:crypto';
import { DEFAULT_RATE_LIMIT, DEFAULT_RATE_WINDOW_SECONDS } from '../core/constants';
import { RateLimitExceededError, RateLimiterUnavailableError } from '../core/errors';
import type { RateLimiter } from '../ports/rate-limiter';
import type { RedisConnection, RedisStoreLogger } from './redis-connection';
import { RedisScript } from './redis-script';

/**
 * Sliding window over a sorted set of call times (the server's clock, so nodes with skewed clocks
 * still agree). Returns {1, count} when the call is admitted, {0, oldest} when the window is full.
 */
const SLIDING_WINDOW = new RedisScript(`
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local windowUs = tonumber(ARGV[2])
local member = ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowUs)
local count = redis.call('ZCARD', key)
if count >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, tostring(tonumber(oldest[2]) + windowUs - now)}
end
redis.call('ZADD', key, now, member)
redis.call('PEXPIRE', key, math.ceil(windowUs / 1000) + 1000)
return {1, tostring(count + 1)}
`);

/** Refusal while the limiter's Redis store is unreachable: a clear message, a randomized retry_after. */
function redisUnavailable(retryAfter: number, limit: number, window: number) {
  return new RateLimiterUnavailableError(
    retryAfter,
    limit,
    window,
    `Rate limiter unavailable (its Redis store cannot be reached), so calls are refused for now. Retry after ${retryAfter.toFixed(1)}s`,
  );
}

// Kept importable from here (and from `nestjs-parse-agent/redis`), where it first lived.
export { RateLimiterUnavailableError };

export interface RedisRateLimiterOptions {
  limit?: number;
  /** Seconds. */
  window?: number;
  /** Longest wait for Redis before refusing (default 1000 ms). */
  timeoutMs?: number;
  logger?: RedisStoreLogger;
}

/**
 * At most `limit` calls per key in any `window` seconds, counted across every node on one Redis.
 * Keys are hashed so principals' identifiers never sit in Redis. When Redis is unreachable it
 * fails closed (refuses with a randomized retry_after, 1-5 s) and recovers by itself once the
 * connection is back: each call tries again.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly limit: number;
  readonly window: number;
  protected readonly timeoutMs: number;
  protected lastWarnAt = 0;
  protected readonly windowUs: number;
  /**
   * Members of the window's sorted set must be unique across calls, limiters and nodes: a random
   * prefix per limiter and a counter, instead of random bytes drawn for every call.
   */
  protected readonly memberPrefix = `${randomBytes(9).toString('base64url')}.`;
  protected members = 0;
  /** Redis keys of recent principals (hashing each call's key costs more than the lookup). */
  protected readonly keys = new Map<string, string>();

  constructor(
    protected readonly redis: RedisConnection,
    protected readonly options: RedisRateLimiterOptions = {},
  ) {
    this.limit = options.limit ?? DEFAULT_RATE_LIMIT;
    this.window = options.window ?? DEFAULT_RATE_WINDOW_SECONDS;
    if (!Number.isInteger(this.limit) || this.limit < 1) {
      throw new RangeError(`rate limit must be a positive integer, got ${String(this.limit)}`);
    }
    if (!(this.window > 0)) {
      throw new RangeError(`rate window must be positive seconds, got ${String(this.window)}`);
    }
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.windowUs = Math.round(this.window * 1_000_000);
  }

  protected keyOf(key: string): string {
    let redisKey = this.keys.get(key);
    if (redisKey === undefined) {
      if (this.keys.size >= KEY_CACHE_SIZE) this.keys.clear();
      redisKey = this.redis.key('rl', digest(key));
      this.keys.set(key, redisKey);
    }
    return redisKey;
  }

  async check(key = 'default'): Promise<void> {
    let reply: unknown;
    try {
      if (!this.redis.ready) throw new Error(`connection is ${this.redis.client.status}`);
      reply = await withTimeout(
        SLIDING_WINDOW.run(
          this.redis.client,
          [this.keyOf(key)],
          [this.limit, this.windowUs, `${this.memberPrefix}${(this.members++).toString(36)}`],
        ),
        this.timeoutMs,
      );
    } catch (error) {
      this.reportOutage(error);
      throw redisUnavailable(randomRetryAfter(), this.limit, this.window);
    }
    const [admitted, value] = reply as [number, string];
    if (admitted === 1) return;
    const retryAfter = Math.max(0.1, Number(value) / 1_000_000);
    throw new RateLimitExceededError(Math.round(retryAfter * 100) / 100, this.limit, this.window);
  }

  /** Logs at most one warning per 10 s during an outage. */
  protected reportOutage(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnAt < 10_000) return;
    this.lastWarnAt = now;
    this.options.logger?.warn(
      `Redis rate limiter unreachable (${(error as Error)?.message ?? String(error)}); refusing tool calls until it returns.`,
    );
  }
}

/** Principals whose Redis key is kept; past it the cache starts over. */
const KEY_CACHE_SIZE = 10_000;

function digest(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

function randomRetryAfter(): number {
  return Math.round((1 + Math.random() * 4) * 100) / 100;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
