import { RateLimitExceededError } from '../core/errors';
import { KeyedSlidingWindowRateLimiter, SlidingWindowRateLimiter } from './in-memory-rate-limiter';
import { checkRateLimit, type RateLimiter } from './rate-limiter';

/** A clock the test moves by hand (milliseconds). */
function manualClock(start = 0) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

describe('SlidingWindowRateLimiter', () => {
  it('uses 60 calls per 60 seconds by default', () => {
    const limiter = new SlidingWindowRateLimiter();
    expect(limiter.limit).toBe(60);
    expect(limiter.window).toBe(60);
  });

  it('allows `limit` calls in a window and refuses the next with retryAfter, limit and window', () => {
    const clock = manualClock();
    const limiter = new SlidingWindowRateLimiter(2, 10, clock.now);
    limiter.check();
    clock.advance(1000);
    limiter.check();
    clock.advance(1000);
    const error = thrownBy(() => limiter.check()) as RateLimitExceededError;
    expect(error).toBeInstanceOf(RateLimitExceededError);
    expect(error.errorCode).toBe('rate_limited');
    expect(error.retryAfter).toBe(8); // the first call leaves the window at t=10s
    expect(error.limit).toBe(2);
    expect(error.window).toBe(10);
    expect(error.message).toBe('Rate limit exceeded (2 requests per 10s). Retry after 8.0s');
  });

  it('slides: a slot frees exactly when the oldest call leaves the window', () => {
    const clock = manualClock(1_000_000);
    const limiter = new SlidingWindowRateLimiter(2, 10, clock.now);
    limiter.check(); // t=0
    clock.advance(4000);
    limiter.check(); // t=4
    clock.advance(5999);
    expect(() => limiter.check()).toThrow(RateLimitExceededError); // t=9.999
    clock.advance(1);
    expect(() => limiter.check()).not.toThrow(); // t=10: the t=0 call has left
    expect(() => limiter.check()).toThrow(RateLimitExceededError); // t=4 and t=10 remain
    clock.advance(4000);
    expect(() => limiter.check()).not.toThrow(); // t=14: the t=4 call has left
  });

  it('does not count refused calls against the window', () => {
    const clock = manualClock();
    const limiter = new SlidingWindowRateLimiter(1, 10, clock.now);
    limiter.check();
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      expect(() => limiter.check()).toThrow(RateLimitExceededError);
    }
    clock.advance(5000); // t=10
    expect(() => limiter.check()).not.toThrow();
  });

  it('rounds retryAfter to hundredths and never reports less than 0.1 s', () => {
    const clock = manualClock();
    const limiter = new SlidingWindowRateLimiter(1, 1, clock.now);
    limiter.check();
    clock.advance(123);
    expect((thrownBy(() => limiter.check()) as RateLimitExceededError).retryAfter).toBe(0.88);
    clock.advance(870);
    expect((thrownBy(() => limiter.check()) as RateLimitExceededError).retryAfter).toBe(0.1);
  });

  it('reports the calls remaining in the current window', () => {
    const clock = manualClock();
    const limiter = new SlidingWindowRateLimiter(3, 10, clock.now);
    expect(limiter.remaining()).toBe(3);
    limiter.check();
    limiter.check();
    expect(limiter.remaining()).toBe(1);
    clock.advance(10_000);
    expect(limiter.remaining()).toBe(3);
  });

  it('decides every call exactly as a naive sliding window does, over a long random run', () => {
    // Reference: keep every call time, count those inside the window.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const clock = manualClock();
    const limit = 50;
    const limiter = new SlidingWindowRateLimiter(limit, 2, clock.now);
    const accepted: number[] = [];
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      clock.advance(Math.floor(random() * 90));
      const now = clock.now();
      const inWindow = accepted.filter((t) => t > now - 2000);
      let error: RateLimitExceededError | undefined;
      try {
        limiter.check();
      } catch (thrown) {
        error = thrown as RateLimitExceededError;
      }
      if (inWindow.length >= limit) {
        expect(error).toBeInstanceOf(RateLimitExceededError);
        const expected = Math.max(0.1, (inWindow[0] + 2000 - now) / 1000);
        expect(error!.retryAfter).toBe(Math.round(expected * 100) / 100);
        refused++;
      } else {
        expect(error).toBeUndefined();
        accepted.push(now);
      }
      if (i % 997 === 0)
        expect(limiter.remaining()).toBe(Math.max(0, limit - inWindow.length - (error ? 0 : 1)));
    }
    // The run exercised both outcomes.
    expect(refused).toBeGreaterThan(100);
    expect(accepted.length).toBeGreaterThan(10_000);
  });

  it('keeps only about the calls of one window in memory', () => {
    class Inspectable extends SlidingWindowRateLimiter {
      get stored() {
        return this.stamps.length;
      }
    }
    const clock = manualClock();
    const limiter = new Inspectable(1_000_000, 1, clock.now);
    for (let i = 0; i < 100_000; i++) {
      limiter.check();
      clock.advance(1); // 1,000 calls per one-second window
    }
    // At t = 100,000 the window holds the calls made after t = 99,000: 999 of them.
    expect(limiter.remaining()).toBe(1_000_000 - 999);
    expect(limiter.stored).toBeLessThanOrEqual(2 * 1000 + 1);
  });

  it.each([[0], [-1], [1.5], [Number.NaN]])('refuses the limit %p', (limit) => {
    expect(() => new SlidingWindowRateLimiter(limit, 60)).toThrow(RangeError);
  });

  it.each([[0], [-5], [Number.NaN]])('refuses the window %p', (window) => {
    expect(() => new SlidingWindowRateLimiter(60, window)).toThrow(RangeError);
  });
});

describe('KeyedSlidingWindowRateLimiter', () => {
  it('keeps one window per key, so one identity cannot exhaust another', () => {
    const clock = manualClock();
    const limiter = new KeyedSlidingWindowRateLimiter(1, 10, clock.now);
    limiter.check('alice');
    expect(() => limiter.check('alice')).toThrow(RateLimitExceededError);
    expect(() => limiter.check('bob')).not.toThrow();
    expect(() => limiter.check('bob')).toThrow(RateLimitExceededError);
    expect(() => limiter.check()).not.toThrow();
    expect(() => limiter.check('default')).toThrow(RateLimitExceededError);
    clock.advance(10_000);
    expect(() => limiter.check('alice')).not.toThrow();
  });

  it('validates limit and window like the single-window limiter', () => {
    expect(() => new KeyedSlidingWindowRateLimiter(0, 10)).toThrow(RangeError);
    expect(() => new KeyedSlidingWindowRateLimiter(5, 0)).toThrow(RangeError);
  });

  it('prunes only idle windows when many keys accumulate, never a limited one', () => {
    class Inspectable extends KeyedSlidingWindowRateLimiter {
      get size() {
        return this.windows.size;
      }
    }
    const clock = manualClock();
    const limiter = new Inspectable(1, 10, clock.now);
    limiter.check('hot');
    for (let i = 0; i < 10_001; i++) limiter.check(`k${i}`);
    clock.advance(5_000);
    limiter.check('new-while-busy');
    expect(limiter.size).toBe(10_003); // every window still active: nothing pruned
    expect(() => limiter.check('hot')).toThrow(RateLimitExceededError);

    clock.advance(10_000);
    limiter.check('hot'); // refreshes 'hot' at t=15s
    limiter.check('new-after-idle'); // triggers a prune of the idle windows
    expect(limiter.size).toBe(2);
    expect(() => limiter.check('hot')).toThrow(RateLimitExceededError);
  });
});

describe('checkRateLimit', () => {
  afterEach(() => jest.restoreAllMocks());

  it('passes the key to the limiter and resolves when the call is allowed', async () => {
    const check = jest.fn();
    const onFailure = jest.fn();
    await expect(checkRateLimit({ check }, 'user:1', onFailure)).resolves.toBeUndefined();
    expect(check).toHaveBeenCalledWith('user:1');
    expect(onFailure).not.toHaveBeenCalled();
  });

  it('rethrows a real rate-limit refusal unchanged, without reporting a failure', async () => {
    const refusal = new RateLimitExceededError(3, 10, 60);
    const onFailure = jest.fn();
    const limiter: RateLimiter = {
      check: () => {
        throw refusal;
      },
    };
    await expect(checkRateLimit(limiter, undefined, onFailure)).rejects.toBe(refusal);
    expect(onFailure).not.toHaveBeenCalled();
  });

  it('turns a broken limiter into a rate-limit refusal (fail closed) and reports the failure', async () => {
    const broken = new Error('redis: connection refused');
    const onFailure = jest.fn();
    const limiter: RateLimiter = {
      limit: 100,
      window: 30,
      check: () => {
        throw broken;
      },
    };
    const error = (await checkRateLimit(limiter, 'k', onFailure).catch(
      (e: unknown) => e,
    )) as RateLimitExceededError;
    expect(error).toBeInstanceOf(RateLimitExceededError);
    expect(error).not.toBe(broken);
    expect(error.retryAfter).toBeGreaterThanOrEqual(1);
    expect(error.retryAfter).toBeLessThanOrEqual(5);
    expect(error.limit).toBe(100);
    expect(error.window).toBe(30);
    expect(error.message).not.toContain('redis');
    expect(onFailure).toHaveBeenCalledTimes(1);
    expect(onFailure).toHaveBeenCalledWith(broken);
  });

  it('handles async limiters that reject, and falls back to the default limit and window', async () => {
    const onFailure = jest.fn();
    const limiter: RateLimiter = { check: () => Promise.reject(new TypeError('boom')) };
    const error = (await checkRateLimit(limiter, undefined, onFailure).catch(
      (e: unknown) => e,
    )) as RateLimitExceededError;
    expect(error).toBeInstanceOf(RateLimitExceededError);
    expect(error.limit).toBe(60);
    expect(error.window).toBe(60);
    expect(onFailure).toHaveBeenCalledWith(expect.any(TypeError));
  });

  it.each([
    [0, 1],
    [0.5, 3],
    [0.999999, 5],
  ])('spreads retryAfter between 1 and 5 s (random %p -> %p)', async (random, expected) => {
    jest.spyOn(Math, 'random').mockReturnValue(random);
    const limiter: RateLimiter = {
      check: () => {
        throw new Error('down');
      },
    };
    const error = (await checkRateLimit(limiter, undefined, () => undefined).catch(
      (e: unknown) => e,
    )) as RateLimitExceededError;
    expect(error.retryAfter).toBe(expected);
  });

  it('keeps retryAfter within 1-5 s with two decimals over many failures', async () => {
    const limiter: RateLimiter = {
      check: () => {
        throw new Error('down');
      },
    };
    for (let i = 0; i < 200; i++) {
      const error = (await checkRateLimit(limiter, undefined, () => undefined).catch(
        (e: unknown) => e,
      )) as RateLimitExceededError;
      expect(error.retryAfter).toBeGreaterThanOrEqual(1);
      expect(error.retryAfter).toBeLessThanOrEqual(5);
      expect(Math.round(error.retryAfter * 100) / 100).toBe(error.retryAfter);
    }
  });
});
