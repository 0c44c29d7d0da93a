import type { ServerResponse } from 'node:http';
import { fromEvent, interval, map, merge, NEVER, Observable, takeUntil, takeWhile } from 'rxjs';
import type { ParseAgent } from '../../agent/parse-agent';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import { serverInfoOf } from '../../mcp/modern-revision';
import type { McpSession } from '../../ports/session-store';
import type { HttpEndpoint } from './http-endpoint';
import { serveListenStream } from './listen-stream';
import { openEventStream, sendJsonRpcError } from './mcp-http-response';
import type { McpRequest } from './mcp-request';
import type { PrincipalStreams } from './principal-streams';
import { formatSseFrame, type SseFrame } from './sse-operators';
import { acceptsEventStream } from './transport-checks';

export interface NotificationStream {
  req: McpRequest;
  res: ServerResponse;
  owner: string;
  session: McpSession | undefined;
  /** The open GET and listen streams per principal (capped). */
  streams: PrincipalStreams;
  /** The agent of the GET request: the session's resource subscriptions run as it. */
  agent?: ParseAgent;
}

const SHUTTING_DOWN_TEXT = 'server shutting down';

/**
 * GET: the standalone stream of server notifications (list changes) for one client, with
 * keep-alives, until the client leaves, its session ends, a newer stream of the same caller
 * evicts it, or the server shuts down (with a last comment saying so).
 */
export function serveNotificationStream(endpoint: HttpEndpoint, stream: NotificationStream): void {
  const { req, res, session } = stream;
  openEventStream(req, res);
  // One caller's streams are capped (its oldest closes), so it cannot hold sockets for everyone.
  const release = stream.streams.add(stream.owner, () => {
    if (res.writableEnded) return;
    res.write(formatSseFrame({ kind: 'comment', text: 'closed: newer stream of this caller' }));
    res.end();
  });
  res.once('close', release);
  const shutdownNotice$ = endpoint.drain.shutdown$.pipe(
    map((): SseFrame => ({ kind: 'comment', text: SHUTTING_DOWN_TEXT })),
  );
  const keepAlive$ = interval(endpoint.options.heartbeatIntervalMs).pipe(
    map((): SseFrame => ({ kind: 'comment', text: 'keep-alive' })),
  );
  merge(
    endpoint.listChanged(),
    sessionUpdates(endpoint, stream),
    pushed(endpoint, stream),
    keepAlive$,
    shutdownNotice$,
  )
    .pipe(
      // The shutdown notice is the last frame.
      takeWhile((frame) => frame.kind !== 'comment' || frame.text !== SHUTTING_DOWN_TEXT, true),
      takeUntil(merge(fromEvent(res, 'close'), session?.ended$ ?? NEVER)),
    )
    .subscribe({
      next: (frame) => res.write(formatSseFrame(frame)),
      complete: () => {
        if (!res.writableEnded) res.end();
      },
    });
}

/**
 * The session's resource updates while this stream is open: its subscriptions run on LiveQuery
 * from subscription to unsubscription of this Observable (the stream's close ends them here).
 */
function sessionUpdates(endpoint: HttpEndpoint, stream: NotificationStream): Observable<SseFrame> {
  const service = endpoint.dispatcher.subscriptions;
  const { session, agent } = stream;
  if (!service || !session || !agent) return NEVER;
  return new Observable<SseFrame>((subscriber) =>
    service.listen(session, agent, (message) => subscriber.next({ kind: 'message', message })),
  );
}

/** What the application pushes to this stream's session or principal (McpNotifier). */
function pushed(endpoint: HttpEndpoint, stream: NotificationStream): Observable<SseFrame> {
  const { session } = stream;
  if (!session) return NEVER;
  const principals = [stream.owner, ...(session.user ? [session.user] : [])];
  return new Observable<SseFrame>((subscriber) =>
    endpoint.dispatcher.notifier.register(session.id, principals, (message) =>
      subscriber.next({ kind: 'message', message }),
    ),
  );
}

export interface ListenCall {
  req: McpRequest;
  res: ServerResponse;
  body: Record<string, unknown>;
  agent: ParseAgent;
  owner: string;
  requestId: JsonRpcId;
  streams: PrincipalStreams;
}

/**
 * POST subscriptions/listen (2026-07-28): an SSE stream acknowledging the honoured filter, then
 * the list changes it asked for, until the client leaves or the server shuts down. Counts
 * against the same per-principal cap as GET streams.
 */
export function serveListenCall(endpoint: HttpEndpoint, call: ListenCall): void {
  const { req, res, requestId } = call;
  if (!endpoint.options.streaming || !acceptsEventStream(req.headers.accept)) {
    return sendJsonRpcError(
      res,
      200,
      -32601,
      'subscriptions/listen needs an SSE response: enable mcp.streaming and send Accept: text/event-stream',
      { id: requestId },
    );
  }
  serveListenStream({
    req,
    res,
    body: call.body,
    requestId,
    owner: call.owner,
    streams: call.streams,
    open: () => openEventStream(req, res),
    toolChanges$: endpoint.toolChanges$,
    promptChanges$: endpoint.promptChanges$,
    shutdown$: endpoint.drain.shutdown$,
    heartbeatIntervalMs: endpoint.options.heartbeatIntervalMs,
    serverInfo: () => serverInfoOf(endpoint.dispatcher, call.agent),
  });
}
