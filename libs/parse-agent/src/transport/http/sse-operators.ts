/**
 * The SSE side of a dispatch as RxJS operators: frames from dispatch items, heartbeats while a tool
 * runs, server notifications merged in while the call is live, and cancellation on unsubscribe.
 */
import { stringifyJsonRpc } from '../../mcp/preserialized';
import {
  catchError,
  concat,
  concatMap,
  connect,
  defer,
  EMPTY,
  endWith,
  filter,
  ignoreElements,
  interval,
  map,
  merge,
  Observable,
  of,
  takeUntil,
  type MonoTypeOperatorFunction,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';
import type {
  DispatchMessage,
  JsonRpcId,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../../mcp/mcp-dispatcher.types';
import type { EventStore } from '../../ports/event-store';
import { jsonRpcError } from './transport-checks';

export type SseFrame =
  | {
      kind: 'message';
      message: JsonRpcResponse | JsonRpcNotification | JsonRpcRequest;
      /** Set on resumable streams: the client's cursor for `Last-Event-ID`. */
      eventId?: string;
    }
  | { kind: 'comment'; text: string }
  /** Opens a resumable stream: an id and no data, so the client can resume before any message. */
  | { kind: 'priming'; eventId: string };

export type ProgressToken = string | number;

/**
 * Every JSON-RPC message goes out as event `message` (clients drop other event names);
 * comments keep proxies and idle connections alive without reaching the client's handlers.
 */
export function formatSseFrame(frame: SseFrame): string {
  if (frame.kind === 'comment') return `: ${frame.text}\n\n`;
  if (frame.kind === 'priming') return `id: ${frame.eventId}\ndata: \n\n`;
  const id = frame.eventId === undefined ? '' : `id: ${frame.eventId}\n`;
  return `event: message\n${id}data: ${stringifyJsonRpc(frame.message)}\n\n`;
}

/**
 * Makes a stream resumable: stores a priming event first, then every message frame, in order,
 * giving each its event id. A frame whose storing fails goes out without an id (the stream stays
 * live; only resuming past it is lost) and `onError` hears why.
 */
export function withEventIds(
  store: EventStore,
  streamId: string,
  onError: (error: unknown) => void,
): MonoTypeOperatorFunction<SseFrame> {
  const stamp = async (frame: SseFrame): Promise<SseFrame> => {
    if (frame.kind !== 'message') return frame;
    try {
      return { ...frame, eventId: await store.storeEvent(streamId, frame.message) };
    } catch (error) {
      onError(error);
      return frame;
    }
  };
  const priming$ = defer(async (): Promise<SseFrame[]> => {
    try {
      return [{ kind: 'priming', eventId: await store.storeEvent(streamId, {}) }];
    } catch (error) {
      onError(error);
      return [];
    }
  }).pipe(concatMap((frames) => frames));
  return (source) => concat(priming$, source.pipe(concatMap(stamp)));
}

/** True for a JSON-RPC response (the message that ends a call's stream). */
export function isResponseMessage(message: object): boolean {
  return 'id' in message && !('method' in message) && ('result' in message || 'error' in message);
}

export const messageFrame = (
  message: JsonRpcResponse | JsonRpcNotification | JsonRpcRequest,
): SseFrame => ({
  kind: 'message',
  message,
});

function isProgressFrame(frame: SseFrame): boolean {
  return (
    frame.kind === 'message' &&
    (frame.message as JsonRpcNotification).method === 'notifications/progress'
  );
}

/**
 * Dispatch items to frames: notifications and the response pass, `accepted` has nothing to send.
 * If the dispatcher itself fails, the stream still ends with an Internal error response.
 */
export function toSseFrames(
  requestId: JsonRpcId,
  onError?: (error: unknown) => void,
): OperatorFunction<DispatchMessage, SseFrame> {
  return (source) =>
    source.pipe(
      filter((item) => item.kind !== 'accepted'),
      map((item) => messageFrame((item as Exclude<DispatchMessage, { kind: 'accepted' }>).message)),
      catchError((error: unknown) => {
        onError?.(error);
        return of(messageFrame(jsonRpcError(-32603, 'Internal error', requestId)));
      }),
    );
}

/** Merges `side$` into the source until the source completes (sync sources included). */
export function mergeWhileActive<T>(side$: Observable<T>): MonoTypeOperatorFunction<T> {
  return (source) =>
    source.pipe(
      connect((shared) =>
        merge(shared, side$.pipe(takeUntil(shared.pipe(ignoreElements(), endWith(true))))),
      ),
    );
}

/**
 * While the call runs, every `intervalMs`: with a client progress token, a progress notification
 * carrying the elapsed seconds, until the tool reports progress of its own; without one, a
 * `keep-alive` comment (clients reject progress for tokens they never issued).
 */
export function withHeartbeats(
  intervalMs: number,
  progressToken: ProgressToken | undefined,
  options: { now?: () => number; scheduler?: SchedulerLike } = {},
): MonoTypeOperatorFunction<SseFrame> {
  const now = options.now ?? (() => Date.now());
  return (source) =>
    new Observable<SseFrame>((subscriber) => {
      const started = now();
      let last = 0;
      // MCP requires progress to increase with each notification: elapsed seconds to the tenth,
      // nudged past the previous value when two beats land in the same tenth (or before the first).
      const elapsed = (): number => {
        const seconds = Math.round((now() - started) / 100) / 10;
        last = seconds > last ? seconds : Math.round((last + 0.001) * 1000) / 1000;
        return last;
      };
      const beat = (): SseFrame =>
        progressToken === undefined
          ? { kind: 'comment', text: 'keep-alive' }
          : messageFrame({
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken, progress: elapsed() },
            });
      return source
        .pipe(
          connect((shared) => {
            const ended$ = shared.pipe(ignoreElements(), endWith(true));
            const stop$ =
              progressToken === undefined
                ? ended$
                : merge(ended$, shared.pipe(filter(isProgressFrame)));
            const beats$ = interval(intervalMs, options.scheduler).pipe(
              map(beat),
              takeUntil(stop$),
            );
            return merge(shared, beats$);
          }),
        )
        .subscribe(subscriber);
    });
}

/** Server notifications (e.g. list_changed) as frames; EMPTY when there are none. */
export function notificationFrames(
  ...sources: Array<Observable<JsonRpcNotification>>
): Observable<SseFrame> {
  return sources.length ? merge(...sources).pipe(map(messageFrame)) : EMPTY;
}

/**
 * Aborts `controller` with `reason` when the subscriber leaves before the source has finished
 * (a disconnected client): the tool's in-flight I/O stops instead of running on unobserved.
 */
export function abortOnUnsubscribe<T>(
  controller: AbortController,
  reason: string,
): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let settled = false;
      const subscription = source.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => {
          settled = true;
          subscriber.error(error);
        },
        complete: () => {
          settled = true;
          subscriber.complete();
        },
      });
      return () => {
        if (!settled && !controller.signal.aborted) controller.abort(reason);
        subscription.unsubscribe();
      };
    });
}
