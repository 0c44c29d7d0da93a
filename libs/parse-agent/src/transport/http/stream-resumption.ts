import type { ServerResponse } from 'node:http';
import { fromEvent, interval, map, merge, NEVER, Subject, takeUntil } from 'rxjs';
import type { JsonRpcNotification } from '../../mcp/mcp-dispatcher.types';
import {
  DEFAULT_CALL_LEASE_MS,
  splitEventId,
  UnknownEventError,
  type EventStore,
  type StoredEvent,
} from '../../ports/event-store';
import type { McpSession } from '../../ports/session-store';
import { errorClassName } from '../shared/mcp-transport';
import { SHUTTING_DOWN_CODE } from './endpoint-drain';
import type { HttpEndpoint } from './http-endpoint';
import { openEventStream, sendJsonRpcError } from './mcp-http-response';
import type { McpRequest } from './mcp-request';
import { streamOwnedBy } from './resumable-stream-id';
import { formatSseFrame, isResponseMessage, type SseFrame } from './sse-operators';

/** The answer of a call whose node stopped (crashed, killed, cut off) before it answered. */
const NODE_STOPPED_MESSAGE =
  'The server node running this call stopped before answering; the call may or may not have taken effect: check, then send it again.';

export interface StreamResumption {
  req: McpRequest;
  res: ServerResponse;
  /** The principal asking: only its own streams resume. */
  owner: string;
  lastEventId: string;
  store: EventStore;
  session: McpSession | undefined;
}

/**
 * GET with `Last-Event-ID`: the events of that call's stream the client missed, then (when the
 * call still runs, here or on another node) the rest as they come, until its response.
 */
export async function resumeStream(
  endpoint: HttpEndpoint,
  resume: StreamResumption,
): Promise<void> {
  const { req, res, store, lastEventId } = resume;
  const streamId = splitEventId(lastEventId)?.streamId;
  const notFound = () =>
    sendJsonRpcError(
      res,
      404,
      -32000,
      'Event stream not found: the events expired or belong to another caller; send the call again',
    );
  // Another principal's stream is answered exactly like an unknown one.
  if (!streamId || !streamOwnedBy(streamId, resume.owner)) return notFound();
  const sent = new Set<string>();
  let replaying = true;
  const early: StoredEvent[] = [];
  let deliver: (event: StoredEvent) => void = (event) => early.push(event);
  // Follow before replaying, so an event stored in between is not lost; ids drop duplicates.
  const stopFollowing = store.follow
    ? await store.follow(streamId, (event) => (replaying ? early.push(event) : deliver(event)))
    : () => undefined;
  const missed: StoredEvent[] = [];
  try {
    await store.replayEventsAfter(lastEventId, {
      send: (eventId, message) => {
        missed.push({ eventId, message });
        return Promise.resolve();
      },
    });
  } catch (error) {
    stopFollowing();
    if (error instanceof UnknownEventError) return notFound();
    endpoint.dispatchLogger.error(`Resuming a stream failed: ${errorClassName(error)}`, error);
    return sendJsonRpcError(res, 503, -32000, 'Event store unavailable: retry shortly', {
      headers: { 'Retry-After': '1' },
    });
  }
  openEventStream(req, res);
  const done$ = new Subject<void>();
  let idle: NodeJS.Timeout | undefined;
  const end = () => {
    clearTimeout(idle);
    stopFollowing();
    done$.next();
    if (!res.writableEnded) res.end();
  };
  // A call whose node died never answers: give up after the retention time without events.
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(end, endpoint.options.eventRetentionMs);
    idle.unref?.();
  };
  deliver = (event) => {
    if (sent.has(event.eventId) || res.writableEnded) return;
    sent.add(event.eventId);
    armIdle();
    // The priming event is only a cursor; it carries nothing to pass on.
    if (Object.keys(event.message).length === 0) return;
    res.write(
      formatSseFrame({
        kind: 'message',
        message: event.message as JsonRpcNotification,
        eventId: event.eventId,
      }),
    );
    if (isResponseMessage(event.message)) end();
  };
  replaying = false;
  for (const event of [...missed, ...early.splice(0)]) deliver(event);
  if (res.writableEnded) return;
  if (!store.follow) return end(); // nothing more can arrive on this connection
  armIdle();
  const closed$ = merge(
    fromEvent(res, 'close'),
    endpoint.drain.shutdown$,
    done$,
    resume.session?.ended$ ?? NEVER,
  );
  interval(endpoint.options.heartbeatIntervalMs)
    .pipe(
      map((): SseFrame => ({ kind: 'comment', text: 'keep-alive' })),
      takeUntil(closed$),
    )
    .subscribe({
      next: (frame) => {
        if (!res.writableEnded) res.write(formatSseFrame(frame));
      },
      complete: end,
    });
  // A shared store knows whether a node still runs the call: once its lease has lapsed without
  // an answer, the call is answered with an error (stored once, for every client resuming it).
  if (store.settleAbandoned) {
    const probe = () =>
      void store.settleAbandoned!(streamId, {
        code: SHUTTING_DOWN_CODE,
        message: NODE_STOPPED_MESSAGE,
      })
        .then((event) => event && deliver(event))
        .catch(() => undefined);
    probe();
    const every = Math.max(50, Math.ceil((store.leaseMs ?? DEFAULT_CALL_LEASE_MS) / 2));
    interval(every).pipe(takeUntil(closed$)).subscribe(probe);
  }
}
