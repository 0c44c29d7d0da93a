import type { Readable, Writable } from 'node:stream';
import { JSON_RPC_ERROR_CODES } from '../../mcp/protocol.constants';
import { readLines } from '../../transport/shared/line-framing';
import { DEFAULT_MAX_BODY_BYTES } from '../../transport/shared/transport-limits';
import { relayGetStream } from './get-stream-relay';
import { causeOf, HttpSessionRelay, type JsonRpcMessage } from './http-session-relay';
import { sameOriginFetch } from './same-origin-fetch';

export interface McpHttpBridgeOptions {
  /** The app's Streamable HTTP endpoint, e.g. https://app.example.com/mcp. */
  url: string;
  /** Sent on every request: `Authorization: Bearer <token>`, `X-MCP-API-Key`, or the app's own. */
  headers: Record<string, string>;
  /** Default process.stdin. */
  input?: Readable;
  /** Only JSON-RPC goes here, one message per line. Default process.stdout. */
  output?: Writable;
  /** Diagnostics; never written to `output`. */
  log?: (line: string) => void;
  /** Longest accepted stdin line in bytes (default 1 MiB, as the HTTP body cap). */
  maxLineBytes?: number;
  /** How long the closing DELETE may take (default 3 000 ms). */
  deleteTimeoutMs?: number;
  /** Replaces the global fetch (tests). */
  fetch?: typeof fetch;
}

export interface McpHttpBridge {
  /** Resolves once stdin ended, every relayed request answered and the session was deleted. */
  readonly closed: Promise<void>;
  /** Stops reading, abandons requests in flight, deletes the session and resolves `closed`. */
  close(): Promise<void>;
}

/**
 * A stdio MCP server that forwards every message to an MCP endpoint over Streamable HTTP, so a
 * desktop client that launches commands reaches the app's own endpoint as its user: the only
 * settings are the URL and the credential header. Lines from `input` are POSTed as they come (a
 * message that is not JSON is answered here) through the session relay; after the client's
 * `notifications/initialized` the server's GET stream is relayed too. Other messages wait for the
 * initialize exchange (they need its session id). On the end of input the session is deleted.
 */
export function bridgeStdioToHttp(options: McpHttpBridgeOptions): McpHttpBridge {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const log = options.log ?? ((line: string) => process.stderr.write(`[parse-agent] ${line}\n`));
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_BODY_BYTES;
  const fetchOnOrigin = sameOriginFetch(options.url, options.fetch ?? fetch);
  const write = (message: unknown) => {
    if (output.writable) output.write(JSON.stringify(message) + '\n');
  };
  const session = new HttpSessionRelay({
    url: options.url,
    headers: options.headers,
    fetch: fetchOnOrigin,
    write,
    log,
  });
  const stream = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let initializing: Promise<void> | undefined;
  let getStreamStarted = false;
  let ended = false;
  let closing: Promise<void> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  const forward = async (line: string, message: JsonRpcMessage) => {
    if (message.method !== 'initialize' && initializing) await initializing;
    if (session.requests.signal.aborted) return;
    const status = await session.forward(line, message);
    if (message.method === 'notifications/initialized' && status === 202 && !getStreamStarted) {
      if (!session.sessionId) return;
      getStreamStarted = true;
      void relayGetStream(session, fetchOnOrigin, stream.signal, log);
    }
  };

  const handleLine = (line: string) => {
    if (!line.trim()) return;
    let message: JsonRpcMessage;
    try {
      message = JSON.parse(line) as JsonRpcMessage;
    } catch {
      return write({
        jsonrpc: '2.0',
        id: null,
        error: { code: JSON_RPC_ERROR_CODES.parseError, message: 'Parse error' },
      });
    }
    const task = forward(line, message ?? {}).catch((error: unknown) =>
      session.answerError(
        message?.id,
        JSON_RPC_ERROR_CODES.internalError,
        `Bridge error: ${causeOf(error)}`,
      ),
    );
    if (message?.method === 'initialize') initializing = task;
    inFlight.add(task);
    void task.finally(() => {
      inFlight.delete(task);
      if (ended && !inFlight.size) void shutdown();
    });
  };

  /** Ends the server's session (DELETE) and resolves `closed`; runs once. */
  const shutdown = (): Promise<void> => {
    closing ??= (async () => {
      stream.abort();
      await session.deleteSession(options.deleteTimeoutMs ?? 3_000);
      resolveClosed();
    })();
    return closing;
  };

  const lines = readLines(input, {
    maxLineBytes,
    onLine: handleLine,
    onTooLong: () => {
      log(`dropped a message longer than ${maxLineBytes} bytes`);
      write({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: JSON_RPC_ERROR_CODES.invalidRequest,
          message: `Message too large: over ${maxLineBytes} bytes`,
        },
      });
    },
    onEnd: () => {
      ended = true;
      if (!inFlight.size) void shutdown();
    },
  });

  return {
    closed,
    close: async () => {
      lines.end();
      session.requests.abort();
      await shutdown();
    },
  };
}
