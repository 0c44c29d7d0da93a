import type { ServerResponse } from 'node:http';
import { EMPTY, fromEvent, interval, map, merge, take, takeUntil, type Observable } from 'rxjs';
import type { JsonRpcId, JsonRpcNotification, McpServerInfo } from '../../mcp/mcp-dispatcher.types';
import {
  honoredListenFilter,
  listenAcknowledgement,
  listenClosedResult,
  tagForSubscription,
} from '../../mcp/modern-revision';
import { JSON_RPC_ERROR_CODES } from '../../mcp/protocol.constants';
import { sendJsonRpcError } from './mcp-http-response';
import type { McpRequest } from './mcp-request';
import type { PrincipalStreams } from './principal-streams';
import { formatSseFrame } from './sse-operators';

export interface ListenStreamOptions {
  req: McpRequest;
  res: ServerResponse;
  body: Record<string, unknown>;
  requestId: JsonRpcId;
  owner: string;
  streams: PrincipalStreams;
  /** Writes the SSE response head. */
  open(): void;
  /** The same sources as GET streams (fed across nodes by the Redis relay when configured). */
  toolChanges$: Observable<unknown>;
  promptChanges$: Observable<unknown>;
  shutdown$: Observable<void>;
  heartbeatIntervalMs: number;
  serverInfo(): Promise<McpServerInfo | undefined>;
}

/**
 * One `subscriptions/listen` stream (2026-07-28): the acknowledgement first, then each list
 * change the honoured filter asked for, tagged with the subscription id (the listen request's id).
 * Ends when the client leaves, when a newer stream of the same caller evicts it, or at shutdown
 * (then with the listen request's result, the revision's graceful close).
 */
export function serveListenStream(options: ListenStreamOptions): void {
  const { res, body, requestId } = options;
  const params = body.params as Record<string, unknown> | undefined;
  const honored = honoredListenFilter(params?.notifications);
  if (requestId === null || !honored) {
    return sendJsonRpcError(
      res,
      200,
      JSON_RPC_ERROR_CODES.invalidParams,
      'Invalid params: subscriptions/listen needs params.notifications, e.g. { "toolsListChanged": true, "promptsListChanged": true }',
      { id: requestId },
    );
  }
  const subscriptionId = requestId;
  const write = (message: object) => {
    if (!res.writableEnded && !res.destroyed) {
      res.write(formatSseFrame({ kind: 'message', message: message as JsonRpcNotification }));
    }
  };
  options.open();
  const release = options.streams.add(options.owner, () => {
    if (res.writableEnded) return;
    res.write(formatSseFrame({ kind: 'comment', text: 'closed: newer stream of this caller' }));
    res.end();
  });
  res.once('close', release);
  write(listenAcknowledgement(subscriptionId, honored));

  const changes = (
    wanted: boolean | undefined,
    source$: Observable<unknown>,
    method: string,
  ): Observable<JsonRpcNotification> =>
    wanted
      ? source$.pipe(map(() => tagForSubscription({ jsonrpc: '2.0', method }, subscriptionId)))
      : EMPTY;
  const keepAlive$ = interval(options.heartbeatIntervalMs).pipe(map(() => undefined));
  const closed$ = fromEvent(res, 'close');
  merge(
    changes(honored.toolsListChanged, options.toolChanges$, 'notifications/tools/list_changed'),
    changes(
      honored.promptsListChanged,
      options.promptChanges$,
      'notifications/prompts/list_changed',
    ),
    keepAlive$,
  )
    .pipe(takeUntil(merge(closed$, options.shutdown$)))
    .subscribe((message) => {
      if (message) write(message);
      else if (!res.writableEnded) {
        res.write(formatSseFrame({ kind: 'comment', text: 'keep-alive' }));
      }
    });
  options.shutdown$.pipe(take(1), takeUntil(closed$)).subscribe(() => {
    void options
      .serverInfo()
      .catch(() => undefined)
      .then((serverInfo) => {
        write(listenClosedResult(subscriptionId, serverInfo));
        if (!res.writableEnded) res.end();
      });
  });
}
