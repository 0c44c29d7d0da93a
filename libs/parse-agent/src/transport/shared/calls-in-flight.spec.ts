import { Subject } from 'rxjs';
import { InMemoryCancellationBus } from '../../ports/in-memory-cancellation-bus';
import { CallsInFlight, cancellationScope, openCall } from './calls-in-flight';

describe('CallsInFlight and openCall (the call scope every transport shares)', () => {
  it('cancels a call by its scope and request id, and no call of another scope or id', () => {
    const calls = new CallsInFlight();
    const cancellations = new InMemoryCancellationBus();
    const mine = openCall({ calls, cancellations, scope: 'alice\u0000s1', requestId: 7 });
    const otherScope = openCall({ calls, cancellations, scope: 'bob\u0000s1', requestId: 7 });
    const otherId = openCall({ calls, cancellations, scope: 'alice\u0000s1', requestId: '7' });
    expect(calls.size).toBe(3);

    expect(cancellations.cancel('alice\u0000s1', 7, 'notifications_cancelled')).toBe(true);
    expect(mine.controller.signal.reason).toBe('notifications_cancelled');
    expect(otherScope.controller.signal.aborted).toBe(false);
    expect(otherId.controller.signal.aborted).toBe(false);
  });

  it('a released call leaves the bus and the calls in flight; release is idempotent', () => {
    const calls = new CallsInFlight();
    const cancellations = new InMemoryCancellationBus();
    const call = openCall({ calls, cancellations, scope: 's', requestId: 1 });
    call.release();
    call.release();
    expect(calls.size).toBe(0);
    expect(cancellations.size).toBe(0);
    expect(cancellations.cancel('s', 1, 'late')).toBe(false);
    expect(call.controller.signal.aborted).toBe(false);
  });

  it('the end of its session aborts a call (session_ended); a released call no longer listens', () => {
    const calls = new CallsInFlight();
    const cancellations = new InMemoryCancellationBus();
    const ended = new Subject<void>();
    const other = new Subject<void>();
    const running = openCall({
      calls,
      cancellations,
      scope: 's',
      requestId: 1,
      sessionEnded: ended,
    });
    const released = openCall({
      calls,
      cancellations,
      scope: 's',
      requestId: 2,
      sessionEnded: ended,
    });
    const elsewhere = openCall({
      calls,
      cancellations,
      scope: 's',
      requestId: 3,
      sessionEnded: other,
    });
    released.release();
    expect(ended.observed).toBe(true);
    ended.next();
    ended.complete();
    expect(running.controller.signal.reason).toBe('session_ended');
    expect(released.controller.signal.aborted).toBe(false);
    expect(elsewhere.controller.signal.aborted).toBe(false);
    running.release();
    elsewhere.release();
    expect(ended.observed).toBe(false);
    expect(other.observed).toBe(false);
    // A session that ended before the call opened aborts it at once.
    const late = openCall({ calls, cancellations, scope: 's', requestId: 4, sessionEnded: ended });
    expect(late.controller.signal.reason).toBe('session_ended');
  });

  it('a call without a scope is tracked for shutdown but cannot be cancelled by id', () => {
    const calls = new CallsInFlight();
    const cancellations = new InMemoryCancellationBus();
    const call = openCall({ calls, cancellations, scope: undefined, requestId: 1 });
    expect(cancellations.size).toBe(0);
    calls.abortAll('server_shutdown');
    expect(call.controller.signal.reason).toBe('server_shutdown');
  });

  it('whenIdle resolves once the last call is released, or after its time limit', async () => {
    const calls = new CallsInFlight();
    await expect(calls.whenIdle(0)).resolves.toBeUndefined();
    const release = calls.track(new AbortController());
    let idle = false;
    const waiting = calls.whenIdle().then(() => (idle = true));
    await Promise.resolve();
    expect(idle).toBe(false);
    release();
    await waiting;
    expect(idle).toBe(true);

    calls.track(new AbortController());
    const started = Date.now();
    await calls.whenIdle(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    expect(calls.size).toBe(1);
  });

  it('scopes cancellation to the principal and correlation id, none without a correlation id', () => {
    expect(cancellationScope('alice', 's1')).toBe('alice\u0000s1');
    expect(cancellationScope('alice', 's1')).not.toBe(cancellationScope('bob', 's1'));
    expect(cancellationScope('alice', undefined)).toBeUndefined();
  });
});
