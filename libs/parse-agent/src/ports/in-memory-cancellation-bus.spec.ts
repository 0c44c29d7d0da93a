import { InMemoryCancellationBus } from './in-memory-cancellation-bus';

describe('InMemoryCancellationBus', () => {
  it('cancels the call registered under (scope, request id), once', () => {
    const registry = new InMemoryCancellationBus();
    const call = new AbortController();
    registry.register('s1', 42, call);
    expect(registry.cancel('s2', 42, 'notifications_cancelled')).toBe(false);
    expect(registry.cancel('s1', '42', 'notifications_cancelled')).toBe(false);
    expect(call.signal.aborted).toBe(false);
    expect(registry.cancel('s1', 42, 'notifications_cancelled')).toBe(true);
    expect(call.signal.reason).toBe('notifications_cancelled');
    expect(registry.cancel('s1', 42, 'again')).toBe(false);
    expect(registry.size).toBe(0);
  });

  it('keeps the latest registration; a stale deregistration leaves it in place', () => {
    const registry = new InMemoryCancellationBus();
    const first = new AbortController();
    const second = new AbortController();
    const dropFirst = registry.register('s', 1, first);
    const dropSecond = registry.register('s', 1, second);
    dropFirst();
    expect(registry.size).toBe(1);
    registry.cancel('s', 1, 'r');
    expect(second.signal.aborted).toBe(true);
    expect(first.signal.aborted).toBe(false);
    dropSecond();
    expect(registry.size).toBe(0);
  });
});
