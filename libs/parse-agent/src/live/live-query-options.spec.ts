import { LIVE_SUBSCRIPTION_TIMING } from './plan-retries';
import { resolveLiveQueryOptions, type InternalLiveQueryOptions } from './live-query-options';

const resolve = (option: InternalLiveQueryOptions) =>
  resolveLiveQueryOptions(option, 'http://127.0.0.1:1337/parse');

describe('resolveLiveQueryOptions', () => {
  it('fills the defaults and derives the ws URL from Parse', () => {
    const options = resolve({ classNames: ['Order'] });
    expect(options.serverURL).toBe('ws://127.0.0.1:1337/parse');
    expect(options.timing).toEqual(LIVE_SUBSCRIPTION_TIMING);
  });

  it('takes the internal timing, checked, so a bad value cannot spin against Parse or Redis', () => {
    const ok = resolve({
      classNames: ['Order'],
      timing: { planRetryDelaysMs: [200, 400], resyncIntervalMs: 1000 },
    });
    expect(ok.timing).toEqual({ planRetryDelaysMs: [200, 400], resyncIntervalMs: 1000 });
    for (const planRetryDelaysMs of [[], [0], [5, 100], [1.5], ['100'] as never]) {
      expect(() => resolve({ classNames: ['Order'], timing: { planRetryDelaysMs } })).toThrow(
        /liveQuery\.timing\.planRetryDelaysMs must be a non-empty list of integers of at least 10/,
      );
    }
    for (const resyncIntervalMs of [0, 1, 99, 2.5]) {
      expect(() => resolve({ classNames: ['Order'], timing: { resyncIntervalMs } })).toThrow(
        /liveQuery\.timing\.resyncIntervalMs must be an integer of at least 100/,
      );
    }
  });
});
