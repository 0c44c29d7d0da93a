import { filter, fromEvent, merge, Subject, takeUntil, type Observable } from 'rxjs';
import { openCall } from '../shared/calls-in-flight';
import { dispatchCall, errorClassName } from '../shared/mcp-transport';
import { SHUTTING_DOWN_CODE, SHUTTING_DOWN_MESSAGE } from './endpoint-drain';
import type { HttpCall, HttpEndpoint } from './http-endpoint';
import { HEADER, PRIMING_PROTOCOL_VERSION } from './mcp-http.constants';
import { openEventStream, sendJsonRpcError } from './mcp-http-response';
import { headerValue, progressTokenOf } from './mcp-request-fields';
import { newStreamId } from './resumable-stream-id';
import {
  abortOnUnsubscribe,
  formatSseFrame,
  isResponseMessage,
  mergeWhileActive,
  toSseFrames,
  withEventIds,
  withHeartbeats,
  type SseFrame,
} from './sse-operators';

function noop(): void {}

/**
 * Answers a call as an SSE stream: progress, heartbeats, list changes and questions to the person
 * as they come, then the response. With an event store every message gets an id, so a client that
 * lost the connection resumes (GET with Last-Event-ID) instead of the call being cancelled.
 */
export function serveSseCall(endpoint: HttpEndpoint, call: HttpCall): void {
  const { req, res, requestId, session, modern } = call;
  const { options, streamCalls } = endpoint;
  if (streamCalls.active >= options.maxConcurrentStreams) {
    return sendJsonRpcError(res, 503, -32000, 'server busy', { id: requestId });
  }
  const running = openCall({
    calls: endpoint.calls,
    cancellations: endpoint.cancellations,
    scope: call.scope,
    requestId,
    sessionEnded: call.session?.ended$,
  });
  const { controller } = running;
  streamCalls.active++;
  const store = endpoint.events;
  const streamId = store ? newStreamId(call.owner) : undefined;
  // Clients before 2025-11-25 cannot parse an event without data; they resume from a message id.
  const takesPriming =
    (headerValue(req, HEADER.protocolVersion) ?? '2025-03-26') >= PRIMING_PROTOCOL_VERSION;
  // Once the client holds an event id it can come back for the rest (on any node with a shared
  // store), so losing the connection no longer cancels the call.
  let resumable = false;
  let released = false;
  let answered = false;
  // The call's lease in a shared store: lets a node resuming the stream tell this node's death.
  const releaseLease = store && streamId && store.hold ? store.hold(streamId, requestId) : noop;
  const release = () => {
    if (released) return;
    released = true;
    releaseLease();
    streamCalls.active--;
    running.release();
  };
  const write = (frame: SseFrame) => {
    if (res.writableEnded || res.destroyed) return;
    if (frame.kind === 'priming' && !takesPriming) return;
    if (frame.kind === 'priming' || (frame.kind === 'message' && frame.eventId)) resumable = true;
    res.write(formatSseFrame(frame));
  };
  const finish = async () => {
    release();
    // Cut short by shutdown: the stream still ends with an answer to the call (stored too, so a
    // client resuming elsewhere gets it).
    if (!answered && endpoint.drain.active) {
      const message = {
        jsonrpc: '2.0' as const,
        id: requestId,
        error: { code: SHUTTING_DOWN_CODE, message: SHUTTING_DOWN_MESSAGE },
      };
      const eventId =
        store && streamId
          ? await store.storeEvent(streamId, message).catch(() => undefined)
          : undefined;
      write({ kind: 'message', message, eventId });
    }
    if (!res.writableEnded) res.end();
  };

  openEventStream(req, res, call.headers);
  const token = progressTokenOf(call.body);
  // Tool calls of a session whose client can answer may ask the person on this stream.
  const questions = new Subject<SseFrame>();
  const elicitation =
    call.body.method === 'tools/call' &&
    !modern &&
    session &&
    endpoint.elicitations.supports(session)
      ? endpoint.elicitations.channel(session.id, questions, call.owner)
      : undefined;
  const clientLeft$ = fromEvent(res, 'close').pipe(filter(() => !resumable));
  const opened = Date.now();
  // A client that went away before its answer: counted, and an event for whoever watches.
  const noteAbandoned = clientLeft$.subscribe(() => {
    noteAbandoned.unsubscribe();
    if (answered || endpoint.drain.active) return;
    streamCalls.abandoned++;
    const params = call.body.params as { name?: unknown } | undefined;
    call.agent.streamAbandoned({
      method: String(call.body.method),
      ...(call.body.method === 'tools/call' && typeof params?.name === 'string'
        ? { tool: params.name }
        : {}),
      open_ms: Date.now() - opened,
      total: streamCalls.abandoned,
    });
  });
  dispatchCall(
    endpoint,
    call.body,
    call.agent,
    // abortOnUnsubscribe (below) aborts the controller before it unsubscribes.
    { signal: controller.signal, ownsSignal: true, logger: endpoint.dispatchLogger, elicitation },
    modern,
  )
    .pipe(
      toSseFrames(requestId, (error) =>
        endpoint.dispatchLogger.error(`MCP dispatch failed: ${errorClassName(error)}`, error),
      ),
      withHeartbeats(options.heartbeatIntervalMs, token),
      // 2026-07-28 clients hear list changes only on their subscriptions/listen streams.
      mergeWhileActive(modern ? questions : merge(endpoint.listChanged(), questions)),
      store && streamId
        ? withEventIds(store, streamId, (error) =>
            endpoint.logger.warn(
              `Resumable stream: an event could not be stored (${errorClassName(error)}); it was sent without an id`,
            ),
          )
        : (frames$: Observable<SseFrame>) => frames$,
      abortOnUnsubscribe(controller, 'client_disconnect'),
      takeUntil(merge(clientLeft$, endpoint.drain.shutdown$)),
    )
    .subscribe({
      next: (frame) => {
        if (frame.kind === 'message' && isResponseMessage(frame.message)) answered = true;
        write(frame);
      },
      complete: () => void finish(),
      error: () => void finish(),
    });
}
