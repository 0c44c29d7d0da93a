import { innermostCause } from '../../core/innermost-cause';
import { JSON_RPC_ERROR_CODES } from '../../mcp/protocol.constants';
import { RelayedSubscriptions } from './relayed-subscriptions';
import { BridgeRedirectRefusedError } from './same-origin-fetch';
import { readSse } from './sse-reader';

export type JsonRpcMessage = {
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

/** What to do about a refusal, by HTTP status. */
const FIXES: Record<number, string> = {
  401: 'the credential was refused. A user needs a current Parse session token (PARSE_SESSION_TOKEN or --session-token-file); an operator key goes in MCP_API_KEY',
  403: 'the server refused this client (an Origin, custom header or permission rule); check --header and the app’s MCP settings',
  404: 'no MCP endpoint at this URL; check the path (usually /mcp)',
  429: 'too many requests; wait and retry',
};

export interface HttpSessionRelayOptions {
  /** The app's Streamable HTTP endpoint. */
  url: string;
  /** Sent on every request (the credential header among them). */
  headers: Record<string, string>;
  /** fetch bound to the endpoint's origin (see sameOriginFetch). */
  fetch: (init: RequestInit) => Promise<Response>;
  /** Writes one JSON-RPC message to the client (stdout). */
  write: (message: unknown) => void;
  log: (line: string) => void;
}

/** A relayed POST: the HTTP status (0 when the server could not be reached) and its messages. */
interface PostAnswer {
  status: number;
  messages: JsonRpcMessage[];
  /** The session the POST named (undefined for one sent without). */
  sessionId?: string;
}

/**
 * One MCP session over Streamable HTTP, seen from the client side: POSTs the client's messages
 * with the `Mcp-Session-Id` and negotiated `MCP-Protocol-Version`, writes the JSON or SSE answers
 * back, turns failures the server did not phrase as JSON-RPC into error answers for the request's
 * id (naming the URL and the fix), and starts a new session once, with the client's own
 * `initialize`, when the server forgot the old one (404): the client's resource subscriptions are
 * made again there, and it is told to re-read them (changes in between were not heard).
 */
export class HttpSessionRelay {
  sessionId?: string;
  protocolVersion?: string;
  /** Aborts every POST in flight (the bridge is closing). */
  readonly requests = new AbortController();
  /** What the client subscribed to through this relay (made again on a new session). */
  readonly subscriptions = new RelayedSubscriptions();
  /** The client's initialize line, replayed when the server forgot the session. */
  private initializeLine?: string;
  private reinitializing?: Promise<boolean>;

  constructor(private readonly options: HttpSessionRelayOptions) {}

  get url(): string {
    return this.options.url;
  }

  /** The headers of every request: the configured ones, the session's, and `extra`. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...this.options.headers,
      ...(this.sessionId ? { [SESSION_HEADER]: this.sessionId } : {}),
      ...(this.protocolVersion ? { [VERSION_HEADER]: this.protocolVersion } : {}),
      ...extra,
    };
  }

  /** An error answer for the request's id; a notification's failure is only logged. */
  answerError(id: JsonRpcMessage['id'], code: number, message: string, data?: unknown): void {
    if (id === undefined || id === null) return this.options.log(message);
    this.options.write({
      jsonrpc: '2.0',
      id,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    });
  }

  /**
   * Forwards one client message and relays its answer. Resolves to the final status: 404 when the
   * session is gone and a new one could not be started (the client was told), 202 for an accepted
   * notification.
   */
  async forward(line: string, message: JsonRpcMessage): Promise<number> {
    const isInitialize = message.method === 'initialize';
    if (isInitialize) this.initializeLine = line;
    let answer = await this.post(line, message, true);
    if (answer.status === 404 && !isInitialize) {
      if (await this.renewAfter(answer.sessionId)) answer = await this.post(line, message, true);
      if (answer.status === 404) {
        this.answerError(
          message.id,
          JSON_RPC_ERROR_CODES.invalidRequest,
          `The MCP server at ${this.url} ended this session and a new one could not be started; restart the client to reconnect.`,
        );
      }
    }
    if (isInitialize) {
      const result = answer.messages.find((m) => m.id === message.id)?.result;
      const version = (result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof version === 'string') this.protocolVersion = version;
    }
    this.subscriptions.note(message, answer.messages);
    return answer.status;
  }

  /** Writes each JSON-RPC message of a JSON or SSE answer; returns them (for initialize). */
  async relayBody(
    response: Response,
    relay: boolean,
    onEventId?: (id: string) => void,
  ): Promise<JsonRpcMessage[]> {
    const seen: JsonRpcMessage[] = [];
    const emit = (data: string) => {
      if (!data.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(data);
      } catch {
        return this.options.log(`ignored a non-JSON message from ${this.url}`);
      }
      for (const message of Array.isArray(value) ? value : [value]) {
        seen.push(message as JsonRpcMessage);
        if (relay) this.options.write(message);
      }
    };
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('text/event-stream') && response.body) {
      await readSse(response.body, emit, onEventId);
    } else {
      emit(await response.text());
    }
    return seen;
  }

  /** Ends the server's session (DELETE), if there is one; a failure is only logged. */
  async deleteSession(timeoutMs: number): Promise<void> {
    if (!this.sessionId) return;
    try {
      const response = await this.options.fetch({
        method: 'DELETE',
        headers: this.headers(),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel().catch(() => undefined);
    } catch (error) {
      this.options.log(
        error instanceof BridgeRedirectRefusedError
          ? error.message
          : `could not end the session at ${this.url} (${causeOf(error)}); it expires on its own`,
      );
    }
  }

  /** POSTs one message. Resolves to the HTTP status (0 when the server could not be reached). */
  private async post(line: string, message: JsonRpcMessage, relay: boolean): Promise<PostAnswer> {
    const signal = this.requests.signal;
    const sessionId = this.sessionId;
    let response: Response;
    try {
      response = await this.options.fetch({
        method: 'POST',
        headers: this.headers({
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        }),
        body: line,
        signal,
      });
    } catch (error) {
      if (!signal.aborted) this.answerUnreached(message, error);
      return { status: 0, messages: [] };
    }
    const newSession = response.headers.get(SESSION_HEADER);
    if (newSession && message.method === 'initialize') this.sessionId = newSession;
    if (response.status === 404 && sessionId && message.method !== 'initialize') {
      await response.body?.cancel().catch(() => undefined);
      return { status: 404, messages: [], sessionId };
    }
    if (!response.ok) {
      await this.relayFailure(response, message);
      return { status: response.status, messages: [] };
    }
    try {
      return { status: response.status, messages: await this.relayBody(response, relay) };
    } catch (error) {
      if (!signal.aborted) {
        this.answerError(
          message.id,
          JSON_RPC_ERROR_CODES.internalError,
          `The answer from ${this.url} broke off (${causeOf(error)}).`,
        );
      }
      return { status: 0, messages: [] };
    }
  }

  /** The request never reached the server, or was redirected where the bridge does not go. */
  private answerUnreached(message: JsonRpcMessage, error: unknown): void {
    this.answerError(
      message.id,
      JSON_RPC_ERROR_CODES.internalError,
      error instanceof BridgeRedirectRefusedError
        ? error.message
        : `Could not reach the MCP server at ${this.url} (${causeOf(error)}). Check the URL and that the app is running.`,
    );
  }

  /** A refusal: the server's JSON-RPC error for this request's id, with the status and a fix. */
  private async relayFailure(response: Response, message: JsonRpcMessage): Promise<void> {
    const text = await response.text().catch(() => '');
    let serverError: JsonRpcMessage['error'];
    try {
      serverError = (JSON.parse(text) as JsonRpcMessage).error;
    } catch {
      serverError = undefined;
    }
    const what = serverError?.message ?? `HTTP ${response.status}`;
    const fix = FIXES[response.status] ?? '';
    this.answerError(
      message.id,
      serverError?.code ?? JSON_RPC_ERROR_CODES.internalError,
      `${what} (HTTP ${response.status} from ${this.url})${fix ? `: ${fix}` : '.'}`,
      serverError?.data,
    );
  }

  /**
   * The server answered 404 for session `staleId` (a restart, an idle timeout): starts a new one,
   * once at a time. True when there is a session to use now, also when another request already
   * replaced the stale one (then nothing is started twice).
   */
  renewAfter(staleId: string | undefined): Promise<boolean> {
    if (this.reinitializing) return this.reinitializing;
    if (this.sessionId && this.sessionId !== staleId) return Promise.resolve(true);
    return this.reinitialize();
  }

  private reinitialize(): Promise<boolean> {
    this.reinitializing ??= (async () => {
      this.sessionId = undefined;
      if (!this.initializeLine) return false;
      this.options.log(
        `the server at ${this.url} no longer knows this session; starting a new one`,
      );
      const init = JSON.parse(this.initializeLine) as JsonRpcMessage;
      const answer = await this.post(this.initializeLine, init, false);
      const result = answer.messages.find((m) => m.id === init.id)?.result;
      if (answer.status < 200 || answer.status >= 300 || !result) return false;
      const version = (result as { protocolVersion?: string }).protocolVersion;
      this.protocolVersion = version ?? this.protocolVersion;
      const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
      await this.post(JSON.stringify(initialized), initialized, false);
      await this.subscribeAgain();
      return true;
    })().finally(() => (this.reinitializing = undefined));
    return this.reinitializing;
  }

  /**
   * The client's subscriptions, made again on the new session; then each URI gets a
   * `notifications/resources/updated`, so the client re-reads what changed while it had no session
   * (a refused one too: the re-read tells the client why).
   */
  private async subscribeAgain(): Promise<void> {
    const uris = this.subscriptions.list();
    if (!uris.length) return;
    let made = 0;
    for (const [index, uri] of uris.entries()) {
      const request = {
        jsonrpc: '2.0',
        id: `parse-agent-bridge-resubscribe-${index}`,
        method: 'resources/subscribe',
        params: { uri },
      };
      const answer = await this.post(JSON.stringify(request), request, false);
      const ok = answer.messages.some((m) => m.id === request.id && m.result !== undefined);
      if (ok) made += 1;
      else this.subscriptions.forget(uri);
    }
    this.options.log(
      `subscribed again to ${made} of ${uris.length} resource(s) on the new session; the client was told to re-read them`,
    );
    for (const uri of uris) {
      this.options.write({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri },
      });
    }
  }
}

/** The innermost code or message of a fetch failure (ECONNREFUSED, ENOTFOUND, ...). */
export function causeOf(error: unknown): string {
  return innermostCause(error) ?? 'unknown error';
}
