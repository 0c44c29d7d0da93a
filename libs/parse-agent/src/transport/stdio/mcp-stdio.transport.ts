import type { Readable, Writable } from 'node:stream';
import type { ParseAgent } from '../../agent/parse-agent';
import type { McpDispatcher } from '../../mcp/mcp-dispatcher';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import { stringifyJsonRpc } from '../../mcp/preserialized';
import { JSON_RPC_ERROR_CODES } from '../../mcp/protocol.constants';
import { parseBoundedJson } from '../shared/bounded-json';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_DEPTH } from '../shared/transport-limits';
import { readLines } from '../shared/line-framing';
import { InMemoryCancellationBus } from '../../ports/in-memory-cancellation-bus';
import { chargeRequest } from '../shared/call-charging';
import { CallsInFlight, openCall } from '../shared/calls-in-flight';
import {
  dispatchCall,
  errorClassName,
  type McpTransport,
  type McpTransportContext,
} from '../shared/mcp-transport';

export interface McpStdioOptions {
  dispatcher: McpDispatcher;
  /** The one agent every message runs as (a stdio server has a single client). */
  agent: ParseAgent;
  /** Default process.stdin. */
  input?: Readable;
  /** Only JSON-RPC goes here, one message per line. Default process.stdout. */
  output?: Writable;
  /** Diagnostics; never written to `output`. Default: stderr. */
  log?: (line: string) => void;
  /** Longest accepted line in bytes (default 1 MiB, as the HTTP body cap). */
  maxLineBytes?: number;
  /** Deepest accepted JSON nesting (default 20, as over HTTP). */
  maxJsonDepth?: number;
}

export interface McpStdioSession extends McpTransport {
  /** Resolves when the input ended and every call in flight has answered. */
  readonly closed: Promise<void>;
  /** Stops reading, cancels calls in flight and resolves `closed`. */
  close(): Promise<void>;
}

/** A stdio server has one client: all its calls share one cancellation scope. */
const STDIO_SCOPE = 'stdio';

/**
 * MCP over stdio: newline-delimited JSON-RPC in, the dispatcher's messages out, one per line. The
 * transport owns bytes and framing only; what a message may do is the dispatcher's and the agent's
 * business. It runs calls on the same transport context as Streamable HTTP: requests run
 * concurrently, `notifications/cancelled` reaches one in flight through the cancellation bus,
 * the methods the agent does not charge itself are charged here, and nothing but JSON-RPC is ever
 * written to the output.
 */
export function serveMcpOverStdio(options: McpStdioOptions): McpStdioSession {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const log = options.log ?? ((line: string) => process.stderr.write(`[parse-agent] ${line}\n`));
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxDepth = options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  const { agent } = options;
  const context: McpTransportContext = {
    dispatcher: options.dispatcher,
    cancellations: new InMemoryCancellationBus(),
    calls: new CallsInFlight(),
    dispatchLogger: { error: (message) => log(message), warn: (message) => log(message) },
  };
  let ended = false;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  const write = (message: unknown) => {
    if (!output.writable) return;
    output.write(stringifyJsonRpc(message) + '\n');
  };
  const writeError = (id: JsonRpcId, code: number, message: string) =>
    write({ jsonrpc: '2.0', id, error: { code, message } });
  const maybeClosed = () => {
    if (ended && context.calls.size === 0) resolveClosed();
  };

  /** Runs one message; a cancel (or close) unsubscribes it, and the dispatcher sends no more. */
  const run = (body: Record<string, unknown>, requestId: JsonRpcId | undefined) => {
    const running = openCall({
      calls: context.calls,
      cancellations: context.cancellations,
      scope: requestId === undefined ? undefined : STDIO_SCOPE,
      requestId: requestId ?? null,
    });
    const finish = () => {
      running.release();
      maybeClosed();
    };
    const subscription = dispatchCall(context, body, agent, {
      logger: context.dispatchLogger,
    }).subscribe({
      next: (item) => {
        if (item.kind === 'notification' || item.kind === 'response') write(item.message);
      },
      complete: finish,
    });
    if (subscription.closed) return;
    subscription.add(finish);
    running.controller.signal.addEventListener('abort', () => subscription.unsubscribe(), {
      once: true,
    });
  };

  const handleLine = (line: string) => {
    if (!line.trim()) return;
    const parsed = parseBoundedJson(line, maxDepth);
    if (!parsed.ok) return writeError(null, JSON_RPC_ERROR_CODES.parseError, 'Parse error');
    const body = parsed.value as Record<string, unknown>;
    const isObject = body !== null && typeof body === 'object';
    if (isObject && body.method === 'notifications/cancelled') {
      const requestId = (body.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') {
        void context.cancellations.cancel(STDIO_SCOPE, requestId, 'notifications_cancelled');
      }
    }
    const requestId =
      isObject && typeof body.method === 'string' && 'id' in body
        ? (body.id as JsonRpcId)
        : undefined;
    const charging = requestId === undefined ? undefined : chargeRequest(agent, body.method);
    if (!charging) return run(body, requestId);
    // Held as a call meanwhile, so the end of input waits for it.
    const untrack = context.calls.track(new AbortController());
    charging
      .then(
        (refused) => {
          if (refused) writeError(requestId ?? null, -32000, refused.message);
          else run(body, requestId);
        },
        (error: unknown) => {
          log(`rate limiter failure: ${errorClassName(error)}`);
          writeError(requestId ?? null, JSON_RPC_ERROR_CODES.internalError, 'Internal error');
        },
      )
      .finally(() => {
        untrack();
        maybeClosed();
      });
  };

  const lines = readLines(input, {
    maxLineBytes,
    onLine: handleLine,
    onTooLong: () => {
      log(`dropped a message longer than ${maxLineBytes} bytes`);
      writeError(
        null,
        JSON_RPC_ERROR_CODES.invalidRequest,
        `Message too large: over ${maxLineBytes} bytes`,
      );
    },
    onEnd: () => {
      ended = true;
      maybeClosed();
    },
  });

  return {
    kind: 'stdio',
    get callsInFlight() {
      return context.calls.size;
    },
    closed,
    close: async () => {
      lines.end();
      context.calls.abortAll('transport_closed');
      await closed;
    },
  };
}
