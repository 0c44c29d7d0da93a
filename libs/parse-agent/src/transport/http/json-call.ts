import type { ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';
import type { DispatchTerminal } from '../../mcp/mcp-dispatcher';
import type { DispatchMessage } from '../../mcp/mcp-dispatcher.types';
import { openCall } from '../shared/calls-in-flight';
import { dispatchCall, errorClassName } from '../shared/mcp-transport';
import { SHUTTING_DOWN_CODE, SHUTTING_DOWN_MESSAGE } from './endpoint-drain';
import type { HttpCall, HttpEndpoint } from './http-endpoint';
import { RESPONSE_HEADER } from './mcp-http.constants';
import { sendJson, sendJsonRpcError } from './mcp-http-response';

/**
 * Answers a call with one JSON body: the dispatch's last message (notifications before it are
 * dropped, as the Streamable HTTP spec allows). A failed initialize leaves no session behind.
 */
export async function serveJsonCall(endpoint: HttpEndpoint, call: HttpCall): Promise<void> {
  const { res, requestId } = call;
  const running = openCall({
    calls: endpoint.calls,
    cancellations: endpoint.cancellations,
    scope: call.scope,
    requestId,
    sessionEnded: call.session?.ended$,
  });
  let terminal: DispatchTerminal | undefined;
  try {
    terminal = await jsonTerminal(
      dispatchCall(
        endpoint,
        call.body,
        call.agent,
        // jsonTerminal aborts the controller before it unsubscribes.
        {
          signal: running.controller.signal,
          ownsSignal: true,
          logger: endpoint.dispatchLogger,
          session: call.session,
        },
        call.modern,
      ),
      res,
      running.controller,
      endpoint.drain.shutdown$,
    );
  } catch (error) {
    endpoint.dispatchLogger.error(`MCP dispatch failed: ${errorClassName(error)}`, error);
    terminal = {
      kind: 'response',
      status: 200,
      message: {
        jsonrpc: '2.0',
        id: requestId,
        error: { code: -32603, message: 'Internal error' },
      },
    };
  } finally {
    running.release();
  }
  if (!terminal && endpoint.drain.active && !res.writableEnded) {
    return sendJsonRpcError(res, 503, SHUTTING_DOWN_CODE, SHUTTING_DOWN_MESSAGE, {
      id: requestId,
      headers: { Connection: 'close' },
    });
  }
  if (!terminal || res.writableEnded) return; // the client left
  if (terminal.kind === 'accepted') return sendJson(res, 202, undefined);
  const created = call.body.method === 'initialize' ? call.session : undefined;
  if (terminal.message.error !== undefined && created) {
    // No session for a failed initialize.
    await endpoint.sessions.delete(created.id);
    delete call.headers[RESPONSE_HEADER.sessionId];
  }
  const headers = terminal.headers ? { ...call.headers, ...terminal.headers } : call.headers;
  sendJson(res, terminal.status, terminal.message, headers);
}

/**
 * The response of a call answered as JSON, or undefined when the client leaves or the endpoint
 * shuts down first (the call is then cancelled with reason client_disconnect). Written out
 * rather than as an operator chain: this runs once per JSON request.
 */
function jsonTerminal(
  dispatch$: Observable<DispatchMessage>,
  res: ServerResponse,
  controller: AbortController,
  shutdown$: Observable<void>,
): Promise<DispatchTerminal | undefined> {
  return new Promise((resolve, reject) => {
    let terminal: DispatchTerminal | undefined;
    let settled = false;
    const running: { call?: Subscription } = {};
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      res.off('close', stop);
      shutdown.unsubscribe();
      if (error !== undefined) reject(error);
      else resolve(terminal);
    };
    function stop() {
      if (settled) return;
      if (!controller.signal.aborted) controller.abort('client_disconnect');
      running.call?.unsubscribe();
      finish();
    }
    res.once('close', stop);
    const shutdown = shutdown$.subscribe(stop);
    running.call = dispatch$.subscribe({
      next: (item) => {
        if (item.kind !== 'notification') terminal = item;
      },
      complete: () => finish(),
      error: (error: unknown) => finish(error ?? new Error('dispatch failed')),
    });
    if (settled) running.call.unsubscribe();
  });
}
