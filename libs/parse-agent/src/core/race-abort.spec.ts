import { getEventListeners } from 'node:events';
import { AgentCancelledError, ToolTimeoutError } from './errors';
import { cancelledBy, raceAbort } from './race-abort';

describe('raceAbort', () => {
  it('settles with the promise when nothing aborts, and stops listening to the signal', async () => {
    const controller = new AbortController();
    await expect(raceAbort(Promise.resolve(42), controller.signal)).resolves.toBe(42);
    await expect(raceAbort(Promise.reject(new Error('boom')), controller.signal)).rejects.toThrow(
      'boom',
    );
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('returns the promise itself when there is no signal', () => {
    const promise = Promise.resolve('x');
    expect(raceAbort(promise, undefined)).toBe(promise);
  });

  it('rejects with the abort reason as soon as the signal aborts, without waiting for the promise', async () => {
    const controller = new AbortController();
    const never = new Promise<never>(() => undefined);
    const raced = raceAbort(never, controller.signal);
    const reason = new ToolTimeoutError('query_class', 1);
    controller.abort(reason);
    await expect(raced).rejects.toBe(reason);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('maps the aborted signal through errorFor when one is given', async () => {
    const controller = new AbortController();
    controller.abort('user pressed stop');
    const raced = raceAbort(Promise.resolve(1), controller.signal, cancelledBy);
    await expect(raced).rejects.toBeInstanceOf(AgentCancelledError);
    await expect(raced).rejects.toThrow('user pressed stop');
  });

  it('leaves no unhandled rejection when the signal was aborted before and the promise fails later', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const controller = new AbortController();
      controller.abort('gone');
      let fail!: (error: Error) => void;
      const late = new Promise<never>((_, reject) => (fail = reject));
      await expect(raceAbort(late, controller.signal)).rejects.toBe('gone');
      fail(new Error('late failure'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('cancelledBy', () => {
  it('keeps an AgentCancelledError given as the reason', () => {
    const reason = new AgentCancelledError('stopped by the client');
    const controller = new AbortController();
    controller.abort(reason);
    expect(cancelledBy(controller.signal)).toBe(reason);
  });

  it("turns another error into a cancellation carrying its message, but not the DOM 'AbortError' text", () => {
    const timedOut = new AbortController();
    timedOut.abort(new ToolTimeoutError('query_class', 2));
    const fromTimeout = cancelledBy(timedOut.signal);
    expect(fromTimeout).toBeInstanceOf(AgentCancelledError);
    expect(fromTimeout.message).toContain("Tool 'query_class' timed out after 2 seconds");

    const plain = new AbortController();
    plain.abort();
    const fromDefault = cancelledBy(plain.signal);
    expect(fromDefault).toBeInstanceOf(AgentCancelledError);
    expect(fromDefault.message).toBe(new AgentCancelledError().message);
  });
});
