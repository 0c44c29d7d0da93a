import type { Readable, Writable } from 'node:stream';
import type { Subscription } from 'rxjs';
import type { ParseAgent } from '../../agent/parse-agent';
import type { McpDispatcher } from '../../mcp/mcp-dispatcher';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import { stringifyJsonRpc } from '../../mcp/preserialized';
import { JSON_RPC_ERROR_CODES } from '../../mcp/protocol.constants';
import { parseBoundedJson } from '../http/bounded-json';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_DEPTH } from '../http/mcp-http.constants';
import { readLines } from './line-framing';

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

export interface McpStdioSession {
  /** Resolves when the input ended and every call in flight has answered. */
  readonly closed: Promise<void>;
  /** Stops reading, cancels calls in flight and resolves `closed`. */
  close(): Promise<void>;
}

/**
 * MCP over stdio: newline-delimited JSON-RPC in, the dispatcher's messages out, one per line. The
 * transport owns bytes and framing only; what a message may do is the dispatcher's and the agent's
 * business. Requests run concurrently, `notifications/cancelled` cancels one in flight, and
 * nothing but JSON-RPC is ever written to the output.
 */
export function serveMcpOverStdio(options: McpStdioOptions): McpStdioSession {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const log = options.log ?? ((line: string) => process.stderr.write(`[parse-agent] ${line}\n`));
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxDepth = options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  const inFlight = new Map<string, Subscription>();
  const pending = new Set<Subscription>();
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
    if (ended && pending.size === 0) resolveClosed();
  };

  const handleLine = (line: string) => {
    if (!line.trim()) return;
    const parsed = parseBoundedJson(line, maxDepth);
    if (!parsed.ok) return writeError(null, JSON_RPC_ERROR_CODES.parseError, 'Parse error');
    const body = parsed.value as { id?: unknown; method?: unknown; params?: unknown };
    if (body && typeof body === 'object' && body.method === 'notifications/cancelled') {
      const requestId = (body.params as { requestId?: unknown } | undefined)?.requestId;
      inFlight.get(keyOf(requestId))?.unsubscribe();
    }
    const key =
      body && typeof body === 'object' && typeof body.method === 'string' && 'id' in body
        ? keyOf(body.id)
        : undefined;
    let done = false;
    const subscription = options.dispatcher
      .dispatch(body, options.agent, {
        logger: { error: (message) => log(message), warn: (message) => log(message) },
      })
      .subscribe({
        next: (item) => {
          if (item.kind === 'notification' || item.kind === 'response') write(item.message);
        },
        complete: () => {
          done = true;
          finish();
        },
      });
    const finish = () => {
      pending.delete(subscription);
      if (key !== undefined && inFlight.get(key) === subscription) inFlight.delete(key);
      maybeClosed();
    };
    if (done) return;
    pending.add(subscription);
    // Unsubscribing (cancellation) aborts the call; the dispatcher then sends nothing more.
    subscription.add(finish);
    if (key !== undefined) inFlight.set(key, subscription);
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
    closed,
    close: async () => {
      lines.end();
      for (const subscription of [...pending]) subscription.unsubscribe();
      await closed;
    },
  };
}

/** Map key of a JSON-RPC id (1 and "1" are different requests). */
function keyOf(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}
