import { NEVER, Subject, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { DispatchMessage, JsonRpcNotification } from '../../mcp/mcp-dispatcher.types';
import {
  abortOnUnsubscribe,
  formatSseFrame,
  mergeWhileActive,
  messageFrame,
  toSseFrames,
  withHeartbeats,
  type SseFrame,
} from './sse-operators';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const progressMessage: JsonRpcNotification = {
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: 1, total: 2 },
};
const toolProgress = messageFrame(progressMessage);
const response = messageFrame({ jsonrpc: '2.0', id: 1, result: {} });
const beat = (progress: number): SseFrame =>
  messageFrame({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: 't', progress },
  });
const comment: SseFrame = { kind: 'comment', text: 'keep-alive' };

describe('SSE operators', () => {
  it('formats messages as `message` events and comments as comment lines', () => {
    expect(formatSseFrame(response)).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
    );
    expect(formatSseFrame(comment)).toBe(': keep-alive\n\n');
  });

  it('beats with elapsed seconds until the tool reports progress, then stays quiet', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      const source = cold<SseFrame>('2500ms a 999ms (b|)', { a: toolProgress, b: response });
      const out = source.pipe(withHeartbeats(1000, 't', { now: () => s.now() }));
      expectObservable(out).toBe('1000ms h 999ms i 499ms a 999ms (b|)', {
        h: beat(1),
        i: beat(2),
        a: toolProgress,
        b: response,
      });
    });
  });

  it('keeps heartbeat progress above zero and increasing when beats come faster than a tenth of a second', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      const source = cold<SseFrame>('170ms (b|)', { b: response });
      const out = source.pipe(withHeartbeats(40, 't', { now: () => s.now() }));
      // Elapsed 0.04 s rounds to 0, 0.08 and 0.12 to 0.1, 0.16 to 0.2.
      expectObservable(out).toBe('40ms h 39ms i 39ms j 39ms k 9ms (b|)', {
        h: beat(0.001),
        i: beat(0.1),
        j: beat(0.101),
        k: beat(0.2),
        b: response,
      });
    });
  });

  it('sends keep-alive comments for the whole call when the client gave no token', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      const source = cold<SseFrame>('2500ms a 999ms (b|)', { a: toolProgress, b: response });
      const out = source.pipe(withHeartbeats(1000, undefined, { now: () => s.now() }));
      expectObservable(out).toBe('1000ms c 999ms c 499ms a 499ms c 499ms (b|)', {
        c: comment,
        a: toolProgress,
        b: response,
      });
    });
  });

  it('sends no heartbeat for a call that ends within one interval', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<SseFrame>('500ms (b|)', { b: response });
      expectObservable(source.pipe(withHeartbeats(1000, 't'))).toBe('500ms (b|)', { b: response });
    });
  });

  it('merges side notifications only while the source is live', () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const side = hot<string>('--x--x--x--x');
      const source = cold<string>('----a--(b|)');
      expectObservable(source.pipe(mergeWhileActive(side))).toBe('--x-ax-(b|)');
    });
  });

  it('turns dispatch items into frames and a dispatcher failure into Internal error', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const items = cold<DispatchMessage>('a-b-(c|)', {
        a: { kind: 'notification', message: progressMessage },
        b: { kind: 'accepted' },
        c: { kind: 'response', status: 200, message: { jsonrpc: '2.0', id: 1, result: {} } },
      });
      expectObservable(items.pipe(toSseFrames(1))).toBe('a---(c|)', {
        a: toolProgress,
        c: response,
      });
    });
    const errors: unknown[] = [];
    const frames: SseFrame[] = [];
    throwError(() => new Error('boom'))
      .pipe(toSseFrames(7, (e) => errors.push(e)))
      .subscribe((f) => frames.push(f));
    expect(frames).toEqual([
      messageFrame({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'Internal error' } }),
    ]);
    expect(errors).toHaveLength(1);
  });

  it('aborts when the subscriber leaves early, not after completion', () => {
    const early = new AbortController();
    NEVER.pipe(abortOnUnsubscribe(early, 'client_disconnect')).subscribe().unsubscribe();
    expect(early.signal.reason).toBe('client_disconnect');

    const done = new AbortController();
    const source = new Subject<number>();
    const sub = source.pipe(abortOnUnsubscribe(done, 'client_disconnect')).subscribe();
    source.complete();
    sub.unsubscribe();
    expect(done.signal.aborted).toBe(false);
  });
});
