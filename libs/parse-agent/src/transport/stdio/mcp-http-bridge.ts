import type { Readable, Writable } from 'node:stream';
import { JSON_RPC_ERROR_CODES } from '../../mcp/protocol.constants';
import { DEFAULT_MAX_BODY_BYTES } from '../http/mcp-http.constants';
import { readLines } from './line-framing';
import { innermostCause } from '../../core/innermost-cause';

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

/**
 * The endpoint redirected a request somewhere the bridge will not follow: to another origin
 * (scheme, host or port), where the credential headers must never go, or a same-origin redirect
 * that would turn a POST into a GET.
 */
class BridgeRedirectRefusedError extends Error {
  override readonly name = 'BridgeRedirectRefusedError';
}

export interface McpHttpBridge {
  /** Resolves once stdin ended, every relayed request answered and the session was deleted. */
  readonly closed: Promise<void>;
  /** Stops reading, abandons requests in flight, deletes the session and resolves `closed`. */
  close(): Promise<void>;
}

type JsonRpcMessage = {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

/** Streamable HTTP's header names (see the MCP transport specification). */
const SESSION_HEADER = 'Mcp-Session-Id';
const VERSION_HEADER = 'MCP-Protocol-Version';
/** Redirect statuses; only 307 and 308 keep the method and body. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Same-origin redirects followed per request before giving up. */
const MAX_REDIRECTS = 5;
/** Waits before reopening a GET stream that broke off (the last one repeats). */
const STREAM_RETRY_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

/**
 * A stdio MCP server that forwards every message to an MCP endpoint over Streamable HTTP, so a
 * desktop client that launches commands reaches the app's own endpoint as its user: the only
 * settings are the URL and the credential header. Lines from `input` are POSTed as they come (a
 * message that is not JSON is answered here); JSON and SSE answers are written back one message
 * per line; the `Mcp-Session-Id` and negotiated `MCP-Protocol-Version` ride on every later request;
 * the server's GET stream (notifications it sends unprompted) is relayed too. A session the server
 * forgot (404) is re-initialized once with the client's own `initialize`. Failures that the server
 * did not phrase as JSON-RPC become error answers for the request's id, naming the URL and the fix,
 * so the client never waits forever. On the end of input the session is deleted.
 */
export function bridgeStdioToHttp(options: McpHttpBridgeOptions): McpHttpBridge {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const log = options.log ?? ((line: string) => process.stderr.write(`[parse-agent] ${line}\n`));
  const url = options.url;
  const fetchOnOrigin = sameOriginFetch(url, options.fetch ?? fetch);
  const inFlight = new Set<Promise<void>>();
  const requests = new AbortController();
  const stream = new AbortController();
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;
  /** The client's initialize line, replayed when the server forgot the session. */
  let initializeLine: string | undefined;
  /** Other messages wait for the initialize exchange: they need its session id. */
  let initializing: Promise<void> | undefined;
  let reinitializing: Promise<boolean> | undefined;
  let getStreamStarted = false;
  let ended = false;
  let closing: Promise<void> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  const write = (message: unknown) => {
    if (output.writable) output.write(JSON.stringify(message) + '\n');
  };
  const answerError = (id: JsonRpcMessage['id'], code: number, message: string, data?: unknown) => {
    if (id === undefined || id === null) return log(message);
    write({
      jsonrpc: '2.0',
      id,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    });
  };

  const requestHeaders = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...options.headers,
    ...(sessionId ? { [SESSION_HEADER]: sessionId } : {}),
    ...(protocolVersion ? { [VERSION_HEADER]: protocolVersion } : {}),
    ...extra,
  });

  /** Writes each JSON-RPC message of a JSON or SSE answer; returns them (for initialize). */
  const relayBody = async (
    response: Response,
    relay: boolean,
    onEventId?: (id: string) => void,
  ): Promise<JsonRpcMessage[]> => {
    const seen: JsonRpcMessage[] = [];
    const emit = (data: string) => {
      if (!data.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(data);
      } catch {
        return log(`ignored a non-JSON message from ${url}`);
      }
      for (const message of Array.isArray(value) ? value : [value]) {
        seen.push(message as JsonRpcMessage);
        if (relay) write(message);
      }
    };
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('text/event-stream') && response.body) {
      await readSse(response.body, emit, onEventId);
    } else {
      emit(await response.text());
    }
    return seen;
  };

  /** POSTs one message. Resolves to the HTTP status (0 when the server could not be reached). */
  const post = async (
    line: string,
    message: JsonRpcMessage,
    relay: boolean,
  ): Promise<{ status: number; messages: JsonRpcMessage[] }> => {
    let response: Response;
    try {
      response = await fetchOnOrigin({
        method: 'POST',
        headers: requestHeaders({
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        }),
        body: line,
        signal: requests.signal,
      });
    } catch (error) {
      if (requests.signal.aborted) return { status: 0, messages: [] };
      if (error instanceof BridgeRedirectRefusedError) {
        answerError(message.id, JSON_RPC_ERROR_CODES.internalError, error.message);
        return { status: 0, messages: [] };
      }
      answerError(
        message.id,
        JSON_RPC_ERROR_CODES.internalError,
        `Could not reach the MCP server at ${url} (${causeOf(error)}). Check the URL and that the app is running.`,
      );
      return { status: 0, messages: [] };
    }
    const newSession = response.headers.get(SESSION_HEADER);
    if (newSession && message.method === 'initialize') sessionId = newSession;
    if (response.status === 404 && sessionId && message.method !== 'initialize') {
      await response.body?.cancel().catch(() => undefined);
      return { status: 404, messages: [] };
    }
    if (!response.ok) {
      await relayFailure(response, message);
      return { status: response.status, messages: [] };
    }
    try {
      const messages = await relayBody(response, relay);
      return { status: response.status, messages };
    } catch (error) {
      if (!requests.signal.aborted) {
        answerError(
          message.id,
          JSON_RPC_ERROR_CODES.internalError,
          `The answer from ${url} broke off (${causeOf(error)}).`,
        );
      }
      return { status: 0, messages: [] };
    }
  };

  /** A refusal: the server's JSON-RPC error for this request's id, with the status and a fix. */
  const relayFailure = async (response: Response, message: JsonRpcMessage) => {
    const text = await response.text().catch(() => '');
    let serverError: JsonRpcMessage['error'];
    try {
      serverError = (JSON.parse(text) as JsonRpcMessage).error;
    } catch {
      serverError = undefined;
    }
    const what = serverError?.message ?? `HTTP ${response.status}`;
    const fix = FIXES[response.status] ?? '';
    answerError(
      message.id,
      serverError?.code ?? JSON_RPC_ERROR_CODES.internalError,
      `${what} (HTTP ${response.status} from ${url})${fix ? `: ${fix}` : '.'}`,
      serverError?.data,
    );
  };

  /** The server forgot the session (restart, idle timeout): start a new one, once at a time. */
  const reinitialize = (): Promise<boolean> => {
    reinitializing ??= (async () => {
      sessionId = undefined;
      if (!initializeLine) return false;
      log(`the server at ${url} no longer knows this session; starting a new one`);
      const init = JSON.parse(initializeLine) as JsonRpcMessage;
      const answer = await post(initializeLine, init, false);
      const result = answer.messages.find((m) => m.id === init.id)?.result;
      if (answer.status < 200 || answer.status >= 300 || !result) return false;
      protocolVersion = (result as { protocolVersion?: string }).protocolVersion ?? protocolVersion;
      const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
      await post(JSON.stringify(initialized), initialized, false);
      return true;
    })().finally(() => (reinitializing = undefined));
    return reinitializing;
  };

  const forward = async (line: string, message: JsonRpcMessage) => {
    const isInitialize = message.method === 'initialize';
    if (!isInitialize && initializing) await initializing;
    if (requests.signal.aborted) return;
    let answer = await post(line, message, true);
    if (answer.status === 404 && !isInitialize) {
      if (await reinitialize()) answer = await post(line, message, true);
      if (answer.status === 404) {
        answerError(
          message.id,
          JSON_RPC_ERROR_CODES.invalidRequest,
          `The MCP server at ${url} ended this session and a new one could not be started; restart the client to reconnect.`,
        );
      }
    }
    if (isInitialize) {
      const result = answer.messages.find((m) => m.id === message.id)?.result;
      const version = (result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof version === 'string') protocolVersion = version;
    }
    if (message.method === 'notifications/initialized' && answer.status === 202) {
      startGetStream();
    }
  };

  /** The server's own notifications (list changes, logging): relayed while the bridge runs. */
  const startGetStream = () => {
    if (getStreamStarted || !sessionId) return;
    getStreamStarted = true;
    void (async () => {
      let lastEventId: string | undefined;
      for (let attempt = 0; !stream.signal.aborted; attempt++) {
        try {
          const response = await fetchOnOrigin({
            method: 'GET',
            headers: requestHeaders({
              Accept: 'text/event-stream',
              ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}),
            }),
            signal: stream.signal,
          });
          // 405: this server offers no such stream; anything else but 200 is not worth retrying.
          if (response.status !== 200 || !response.body) {
            await response.body?.cancel().catch(() => undefined);
            if (response.status !== 405) {
              log(`the server at ${url} refused its notification stream (HTTP ${response.status})`);
            }
            return;
          }
          attempt = 0;
          await relayBody(response, true, (id) => (lastEventId = id));
        } catch (error) {
          if (stream.signal.aborted) return;
          if (error instanceof BridgeRedirectRefusedError) return log(error.message);
        }
        const delay = STREAM_RETRY_MS[Math.min(attempt, STREAM_RETRY_MS.length - 1)];
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    })();
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
    if (message && typeof message === 'object' && message.method === 'initialize') {
      initializeLine = line;
    }
    const task = forward(line, message ?? {}).catch((error: unknown) =>
      answerError(
        message?.id,
        JSON_RPC_ERROR_CODES.internalError,
        `Bridge error: ${causeOf(error)}`,
      ),
    );
    if (message?.method === 'initialize') {
      initializing = task;
    }
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
      const id = sessionId;
      if (id) {
        try {
          const response = await fetchOnOrigin({
            method: 'DELETE',
            headers: requestHeaders(),
            signal: AbortSignal.timeout(options.deleteTimeoutMs ?? 3_000),
          });
          await response.body?.cancel().catch(() => undefined);
        } catch (error) {
          log(
            error instanceof BridgeRedirectRefusedError
              ? error.message
              : `could not end the session at ${url} (${causeOf(error)}); it expires on its own`,
          );
        }
      }
      resolveClosed();
    })();
    return closing;
  };

  const lines = readLines(input, {
    maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_BODY_BYTES,
    onLine: handleLine,
    onTooLong: () => {
      const limit = options.maxLineBytes ?? DEFAULT_MAX_BODY_BYTES;
      log(`dropped a message longer than ${limit} bytes`);
      write({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: JSON_RPC_ERROR_CODES.invalidRequest,
          message: `Message too large: over ${limit} bytes`,
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
      requests.abort();
      await shutdown();
    },
  };
}

/** What to do about a refusal, by HTTP status. */
const FIXES: Record<number, string> = {
  401: 'the credential was refused. A user needs a current Parse session token (PARSE_SESSION_TOKEN or --session-token-file); an operator key goes in MCP_API_KEY',
  403: 'the server refused this client (an Origin, custom header or permission rule); check --header and the app’s MCP settings',
  404: 'no MCP endpoint at this URL; check the path (usually /mcp)',
  429: 'too many requests; wait and retry',
};

/**
 * fetch bound to the endpoint's origin. Redirects are never followed by fetch itself: it would
 * carry custom headers such as `X-MCP-API-Key` to whatever host a `Location` names. A redirect
 * within the origin is followed here (307/308 keep the method and body; 301/302/303 only for
 * GET and DELETE, which have no body to lose); one to another origin throws
 * `BridgeRedirectRefusedError` before anything is sent there.
 */
function sameOriginFetch(
  endpoint: string,
  doFetch: typeof fetch,
): (init: RequestInit) => Promise<Response> {
  const origin = new URL(endpoint).origin;
  return async (init) => {
    let target = endpoint;
    for (let hop = 0; ; hop++) {
      const response = await doFetch(target, { ...init, redirect: 'manual' });
      if (!REDIRECTS.has(response.status)) return response;
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get('location');
      if (!location) return response;
      let next: URL;
      try {
        next = new URL(location, target);
      } catch {
        throw new BridgeRedirectRefusedError(
          `The MCP server at ${endpoint} answered HTTP ${response.status} with an invalid Location; nothing was sent further.`,
        );
      }
      if (next.origin !== origin) {
        throw new BridgeRedirectRefusedError(
          `The MCP server at ${endpoint} redirected (HTTP ${response.status}) to another origin, ${next.origin}. The bridge never sends its credential to another origin, so it stopped. If that address is the app's real endpoint, connect to it directly.`,
        );
      }
      const keepsMethod = response.status === 307 || response.status === 308;
      if (!keepsMethod && init.method === 'POST') {
        throw new BridgeRedirectRefusedError(
          `The MCP server at ${endpoint} redirected a POST with HTTP ${response.status}, which would drop the message. Connect to ${next.href} directly.`,
        );
      }
      if (hop + 1 >= MAX_REDIRECTS) {
        throw new BridgeRedirectRefusedError(
          `The MCP server at ${endpoint} redirected more than ${MAX_REDIRECTS} times; check the URL.`,
        );
      }
      target = next.href;
    }
  };
}

/** The innermost code or message of a fetch failure (ECONNREFUSED, ENOTFOUND, ...). */
function causeOf(error: unknown): string {
  return innermostCause(error) ?? 'unknown error';
}

/** Parses a text/event-stream body, calling `emit` with each event's data. */
async function readSse(
  body: ReadableStream<Uint8Array>,
  emit: (data: string) => void,
  onEventId?: (id: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let pending = '';
  let data: string[] = [];
  const dispatch = () => {
    if (data.length) emit(data.join('\n'));
    data = [];
  };
  const field = (line: string) => {
    if (line === '') return dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') data.push(value);
    else if (name === 'id' && onEventId && !value.includes('\0')) onEventId(value);
  };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    // Lines end in \n or \r\n (a \r\n may straddle two chunks, so split on \n only).
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) field(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
  pending += decoder.decode();
  if (pending) field(pending);
  dispatch();
}
