import type { TransportLogger } from './transport-logger';
import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import {
  filter,
  fromEvent,
  interval,
  lastValueFrom,
  map,
  merge,
  NEVER,
  Subject,
  takeUntil,
  takeWhile,
  type MonoTypeOperatorFunction,
  type Observable,
  type Subscription,
} from 'rxjs';
import {
  AgentUnauthorizedError,
  ParseAgentConfigError,
  RateLimitExceededError,
  StoreUnavailableError,
} from '../../core/errors';
import { ParseAgent, type AgentOptions } from '../../agent/parse-agent';
import type { McpDispatcher, DispatchTerminal } from '../../mcp/mcp-dispatcher';
import type {
  DispatchContext,
  DispatchLogger,
  DispatchMessage,
  JsonRpcId,
  JsonRpcNotification,
} from '../../mcp/mcp-dispatcher.types';
import type { CancellationBus } from '../../ports/cancellation-bus';
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import {
  HEADER,
  PRIMING_PROTOCOL_VERSION,
  RESPONSE_HEADER,
  SHUTDOWN_LINGER_MAX_MS,
  SHUTDOWN_LINGER_QUIET_MS,
  SHUTDOWN_SETTLE_MS,
  SSE_HEADERS,
} from './mcp-http.constants';
import { sendJson, sendJsonRpcError, sendUnauthorized } from './mcp-http-response';
import { requestIdOf, unauthorizedLogLine } from './unauthorized-log';
import type { McpGateState, McpRequest, McpRequestGate } from './mcp-request-gate';
import { SessionLimitError, type McpSession, type SessionStore } from '../../ports/session-store';
import { checkRateLimit, type RateLimiter } from '../../ports/rate-limiter';
import { UserKeys, UserUnresolvedError } from './user-key';
import {
  DEFAULT_CALL_LEASE_MS,
  splitEventId,
  UnknownEventError,
  type EventStore,
  type StoredEvent,
} from '../../ports/event-store';
import { newStreamId, streamOwnedBy } from './resumable-stream-id';
import { principalKey } from './principal-key';
import { PrincipalStreams } from './principal-streams';
import {
  abortOnUnsubscribe,
  formatSseFrame,
  isResponseMessage,
  mergeWhileActive,
  notificationFrames,
  toSseFrames,
  withEventIds,
  withHeartbeats,
  type ProgressToken,
  type SseFrame,
} from './sse-operators';
import { acceptsEventStream } from './transport-checks';
import { declaresElicitation, SseElicitations } from './sse-elicitation';
import {
  classifyEra,
  dispatchModern,
  LISTEN_METHOD,
  serverInfoOf,
  type ModernEnvelope,
} from '../../mcp/modern-revision';
import { serveListenStream } from './listen-stream';

/** Maps the authenticated HTTP request to the options of the agent that serves it. */

/** Methods answered over SSE when the client accepts it. */
const STREAMED_METHODS = new Set(['tools/call', 'resources/read']);
export type McpAgentFactory = (
  request: McpRequest,
) => AgentOptions | ParseAgent | Promise<AgentOptions | ParseAgent>;

export interface McpHttpHandlerDependencies {
  options: ResolvedMcpEndpointOptions;
  agentFactory: McpAgentFactory | undefined;
  agents: {
    create(options: AgentOptions): ParseAgent;
    /** Builds an agent after checking its session token (options with `validateSession: true`). */
    createValidated?(options: AgentOptions): Promise<ParseAgent>;
  };
  dispatcher: McpDispatcher;
  toolChanges$: Observable<unknown>;
  promptChanges$: Observable<unknown>;
  gate: McpRequestGate;
  sessions: SessionStore;
  cancellations: CancellationBus;
  /** Set when the endpoint is resumable: streaming calls keep their events here. */
  events?: EventStore;
  /** Whom a request acts for: sessions are counted and initialize limited per user. */
  userKeys: UserKeys;
  /** Limits initialize per user (absent: `initializeRateLimit: false`). */
  initializeLimiter?: RateLimiter;
  logger: TransportLogger;
  /**
   * The HTTP server the endpoint is mounted on: at the end of the drain its listener is closed
   * here, and its connections end after their answer, before the host force-closes any socket.
   */
  httpServer?: () => Server | undefined;
}

/** Methods charged to the rate limit here; tools/call and resources/* are charged by execute(). */
const CHARGED_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'prompts/list',
  'prompts/get',
]);

const TOOLS_CHANGED: JsonRpcNotification = {
  jsonrpc: '2.0',
  method: 'notifications/tools/list_changed',
};
const PROMPTS_CHANGED: JsonRpcNotification = {
  jsonrpc: '2.0',
  method: 'notifications/prompts/list_changed',
};

/** The answer of a call cut short by shutdown, and of calls arriving while the server drains. */
const SHUTTING_DOWN_MESSAGE = 'Server shutting down: the call was not completed; retry it shortly.';
const SHUTTING_DOWN_CODE = -32000;
const SHUTDOWN_REASON = 'server_shutdown';
/** The answer of a call whose node stopped (crashed, killed, cut off) before it answered. */
const NODE_STOPPED_MESSAGE =
  'The server node running this call stopped before answering; the call may or may not have taken effect: check, then send it again.';

function noop(): void {}

const netClose = NetServer.prototype.close;
/** After the listener closes, how long a just-accepted connection gets to send its request. */
const SHUTDOWN_IDLE_CLOSE_MS = 100;

/**
 * Streamable HTTP for one MCP endpoint: after the gate's transport checks and the host's guards,
 * creates the request's agent (agentFactory), applies sessions and correlation, and serves the
 * dispatcher's Observable as one JSON body or as an SSE stream.
 */
export class McpHttpHandler {
  protected readonly shutdown$ = new Subject<void>();
  protected readonly dispatchLogger: DispatchLogger;
  protected readonly agentFactory: McpAgentFactory;
  protected activeStreams = 0;
  /** GET streams open per principal (this process). */
  protected readonly getStreams: PrincipalStreams;
  /** Questions to the person (MCP elicitation) asked on SSE calls, answered by client POSTs. */
  protected readonly elicitations = new SseElicitations();
  /** Every call in flight (JSON and SSE), for the shutdown drain. */
  protected readonly inFlight = new Set<AbortController>();
  protected readonly settled$ = new Subject<void>();
  protected draining?: Promise<void>;
  /** When a call last arrived during the drain (and was refused). */
  protected lastLateCall = 0;

  constructor(protected readonly deps: McpHttpHandlerDependencies) {
    if (typeof deps.agentFactory !== 'function') {
      throw new ParseAgentConfigError(
        'ParseAgentModule.forRoot: the mcp endpoint needs an agentFactory(request) option returning the agent options for the authenticated request (throw AgentUnauthorizedError to refuse).',
      );
    }
    this.agentFactory = deps.agentFactory;
    this.getStreams = new PrincipalStreams(deps.options.maxGetStreamsPerPrincipal);
    // Answers to this node's questions that clients POSTed to another node.
    deps.cancellations.onAnswer?.((sessionId, response) =>
      this.elicitations.settle(response, sessionId),
    );
    const { logger } = deps;
    this.dispatchLogger = {
      error: (message, error) =>
        logger.error(message, error instanceof Error ? error.stack : undefined),
      warn: (message) => logger.warn(message),
    };
  }

  /** Streaming tool calls in flight on this endpoint. */
  get openStreams(): number {
    return this.activeStreams;
  }

  /** Whether the endpoint is draining for shutdown (new calls are refused with 503). */
  get shuttingDown(): boolean {
    return this.draining !== undefined;
  }

  /** Calls in flight on this endpoint (JSON and streaming). */
  get callsInFlight(): number {
    return this.inFlight.size;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.drain();
  }

  /**
   * Graceful stop: refuse new calls, give those in flight the grace period, then cancel the rest
   * through their AbortSignal and answer each with a JSON-RPC error; open streams get a final
   * message and close. Late calls keep getting 503 until the endpoint has been quiet for a moment
   * (SHUTDOWN_LINGER_QUIET_MS), so none is cut off by the server closing its connections.
   * Idempotent.
   */
  drain(gracePeriodMs = this.deps.options.shutdownGracePeriodMs): Promise<void> {
    this.draining ??= (async () => {
      if (this.inFlight.size) {
        this.deps.logger.log?.(
          `Shutting down: waiting up to ${gracePeriodMs} ms for ${this.inFlight.size} call(s) in flight`,
        );
      }
      await this.whenIdle(gracePeriodMs);
      if (this.inFlight.size) {
        this.deps.logger.warn(
          `Shutting down: cancelling ${this.inFlight.size} call(s) still running after ${gracePeriodMs} ms`,
        );
        for (const controller of this.inFlight) controller.abort(SHUTDOWN_REASON);
        // The error answers go out now; the tools' own I/O stops through the aborted signal.
        this.shutdown$.next();
        await this.whenIdle(SHUTDOWN_SETTLE_MS);
      }
      this.shutdown$.next();
      await this.deps.sessions.clear();
      await this.linger();
      await this.closeListener();
    })();
    return this.draining;
  }

  /** Waits until no late call has been refused for SHUTDOWN_LINGER_QUIET_MS (bounded). */
  protected async linger(): Promise<void> {
    const started = Date.now();
    for (;;) {
      const now = Date.now();
      const quietFor = now - Math.max(started, this.lastLateCall);
      if (quietFor >= SHUTDOWN_LINGER_QUIET_MS || now - started >= SHUTDOWN_LINGER_MAX_MS) return;
      await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_LINGER_QUIET_MS - quietFor));
    }
  }

  /**
   * Stops accepting connections, closes the idle ones, and waits (bounded) until every other
   * connection has ended after its answer (each late call gets 503 with Connection: close). The
   * host's own close then finds no socket to destroy under a request being sent.
   */
  protected closeListener(): Promise<void> {
    const server = this.deps.httpServer?.();
    if (!server?.listening) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, SHUTDOWN_LINGER_MAX_MS);
      // net.Server's close: http.Server's would also close every connection without a request
      // parsed yet, including one just accepted whose request is on its way (a reset for it).
      netClose.call(server, done);
      // A connection accepted just now sends its request within a moment and gets the 503; those
      // left idle after that (kept-alive, nothing sent) are closed then.
      const idle = setTimeout(() => server.closeIdleConnections?.(), SHUTDOWN_IDLE_CLOSE_MS);
      function done() {
        clearTimeout(timer);
        clearTimeout(idle);
        resolve();
      }
    });
  }

  /** Resolves when no call is in flight, or after `ms`. */
  protected whenIdle(ms: number): Promise<void> {
    if (!this.inFlight.size) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const subscription = this.settled$.subscribe(() => {
        if (!this.inFlight.size) done();
      });
      function done() {
        clearTimeout(timer);
        subscription.unsubscribe();
        resolve();
      }
    });
  }

  protected track(controller: AbortController): () => void {
    this.inFlight.add(controller);
    return () => {
      if (this.inFlight.delete(controller)) this.settled$.next();
    };
  }

  /** 503 for calls arriving while the endpoint drains; the connection closes after it. */
  protected refuseWhileDraining(res: ServerResponse, id: JsonRpcId = null): boolean {
    if (!this.shuttingDown) return false;
    this.lastLateCall = Date.now();
    sendJsonRpcError(res, 503, SHUTTING_DOWN_CODE, SHUTTING_DOWN_MESSAGE, {
      id,
      headers: { Connection: 'close', 'Retry-After': '1' },
    });
    return true;
  }

  /** POST: one JSON-RPC message in, a JSON body or an SSE stream out. */
  async handlePost(req: McpRequest, res: ServerResponse): Promise<void> {
    let state = await this.deps.gate.ensure(req, res);
    if (!state) return;
    let agent: ParseAgent | undefined;
    if (state.deferred) {
      // A body over the pre-auth limit is read only once the caller is authenticated.
      agent = await this.authenticate(req, res);
      if (!agent) return;
      state = await this.deps.gate.completeBody(req, res);
      if (!state) return;
    }
    const { body, kind } = state as Required<Pick<McpGateState, 'body' | 'kind'>>;
    const bodyId = validId(body.id);
    // 2026-07-28 requests carry their revision per request and need no session.
    const era = classifyEra(body, {
      protocolVersion: headerValue(req, HEADER.protocolVersion),
      method: headerValue(req, HEADER.method),
      name: headerValue(req, HEADER.name),
    });
    if (era.era === 'refused') return sendJson(res, era.status, era.message);
    const modern = era.era === 'modern' && kind === 'request' ? era.envelope : undefined;
    if (this.refuseWhileDraining(res, bodyId)) return;
    agent ??= await this.authenticate(req, res);
    if (!agent) return;
    const owner = principalKey(agent);
    const headers: Record<string, string> = {};

    let user: string | undefined;
    if (kind === 'request' && body.method === 'initialize') {
      user = await this.userOf(req, res, agent, bodyId);
      if (user === undefined || !(await this.admitInitialize(res, user, bodyId))) return;
    }

    // Methods that do work without running a tool count against the caller's rate limit too
    // (tool calls and resource reads are charged by execute()).
    if (kind === 'request' && CHARGED_METHODS.has(String(body.method))) {
      try {
        await agent.consumeRateLimit();
      } catch (error) {
        if (!(error instanceof RateLimitExceededError)) throw error;
        sendJsonRpcError(res, 429, -32000, error.message, {
          id: (body.id ?? null) as JsonRpcId,
          headers: { 'Retry-After': String(Math.max(1, Math.ceil(error.retryAfter))) },
        });
        return;
      }
    }

    let session: McpSession | undefined;
    if (this.deps.options.sessions && era.era !== 'modern') {
      if (body.method === 'initialize' && kind === 'request') {
        try {
          session = await this.deps.sessions.create(owner, {
            user,
            elicitation: declaresElicitation(body.params),
          });
        } catch (error) {
          if (!(error instanceof SessionLimitError)) throw error;
          // The user's own cap is theirs to manage (429); a full table is the server's (503).
          return sendJsonRpcError(res, error.scope === 'user' ? 429 : 503, -32000, error.message, {
            id: bodyId,
            headers: { 'Retry-After': String(error.retryAfter) },
          });
        }
        headers[RESPONSE_HEADER.sessionId] = session.id;
        this.elicitations.remember(session.id, session.ended$, body.params);
      } else {
        const resolved = await this.resolveSession(req, res, owner, bodyId);
        if (resolved === false) return;
        session = resolved;
      }
    }
    this.bindCorrelation(agent, req, session);
    const scope = agent.correlationId ? `${owner}\u0000${agent.correlationId}` : undefined;

    if (body.method === 'notifications/cancelled') {
      const requestId = (body.params as Record<string, unknown> | undefined)?.requestId;
      if (scope && (typeof requestId === 'string' || typeof requestId === 'number')) {
        await Promise.resolve(
          this.deps.cancellations.cancel(scope, requestId, 'notifications_cancelled'),
        ).catch(() => false);
      }
      return sendJson(res, 202, undefined);
    }
    if (kind === 'response') {
      // A client's answer to a server request (elicitation); unknown ids are ignored. One asked
      // on another node is relayed there (the session was checked to be the caller's).
      if (!this.elicitations.settle(body, session?.id) && session) {
        const id = body.id;
        if (typeof id === 'string' || typeof id === 'number') {
          await Promise.resolve(
            this.deps.cancellations.relayAnswer?.(session.id, {
              id,
              result: body.result,
              error: body.error,
            }),
          ).catch(() => false);
        }
      }
      return sendJson(res, 202, undefined);
    }
    // Client responses and notifications get no reply; a request method sent as a notification
    // (no id) is not run at all.
    if (kind !== 'request') return sendJson(res, 202, undefined);

    const requestId = (body.id ?? null) as JsonRpcId;
    if (modern && body.method === LISTEN_METHOD) {
      return this.serveListen(req, res, body, agent, owner, requestId);
    }
    // Only calls that run a tool can report progress or take long; everything else (initialize,
    // tools/list, ping...) is answered as plain JSON, which the Streamable HTTP spec allows.
    const streaming =
      this.deps.options.streaming &&
      kind === 'request' &&
      STREAMED_METHODS.has(String(body.method)) &&
      acceptsEventStream(req.headers.accept);
    if (streaming)
      return this.serveStream(
        req,
        res,
        body,
        agent,
        scope,
        requestId,
        headers,
        session,
        owner,
        modern,
      );
    return this.serveJson(res, body, agent, kind === 'request' ? scope : undefined, requestId, {
      headers,
      session: body.method === 'initialize' ? session : undefined,
      modern,
    });
  }

  /** GET: the standalone stream of server notifications (list changes) for this client. */
  async handleGet(req: McpRequest, res: ServerResponse): Promise<void> {
    const state = await this.deps.gate.ensure(req, res);
    if (!state) return;
    if (this.refuseWhileDraining(res)) return;
    const agent = await this.authenticate(req, res);
    if (!agent) return;
    const owner = principalKey(agent);
    let session: McpSession | undefined;
    if (this.deps.options.sessions) {
      const resolved = await this.resolveSession(req, res, owner);
      if (resolved === false) return;
      session = resolved;
    }
    const lastEventId = headerValue(req, HEADER.lastEventId);
    if (lastEventId !== undefined && this.deps.events) {
      return this.resumeStream(
        req,
        res,
        principalKey(agent),
        lastEventId,
        this.deps.events,
        session,
      );
    }
    this.openEventStream(req, res);
    // One caller's streams are capped (its oldest closes), so it cannot hold sockets for everyone.
    const release = this.getStreams.add(owner, () => {
      if (res.writableEnded) return;
      res.write(formatSseFrame({ kind: 'comment', text: 'closed: newer stream of this caller' }));
      res.end();
    });
    res.once('close', release);
    const shutdownNotice$ = this.shutdown$.pipe(
      map((): SseFrame => ({ kind: 'comment', text: 'server shutting down' })),
    );
    const keepAlive$ = interval(this.deps.options.heartbeatIntervalMs).pipe(
      map((): SseFrame => ({ kind: 'comment', text: 'keep-alive' })),
    );
    merge(this.listChangedFrames(), keepAlive$, shutdownNotice$)
      .pipe(
        takeWhileInclusive(
          (frame) => frame.kind !== 'comment' || frame.text !== 'server shutting down',
        ),
        takeUntil(merge(fromEvent(res, 'close'), session?.ended$ ?? NEVER)),
      )
      .subscribe({
        next: (frame) => res.write(formatSseFrame(frame)),
        complete: () => {
          if (!res.writableEnded) res.end();
        },
      });
  }

  /** DELETE: ends the session named by Mcp-Session-Id (its streams close). */
  async handleDelete(req: McpRequest, res: ServerResponse): Promise<void> {
    const state = await this.deps.gate.ensure(req, res);
    if (!state) return;
    const agent = await this.authenticate(req, res);
    if (!agent) return;
    const id = headerValue(req, HEADER.sessionId);
    if (!id) {
      return sendJsonRpcError(res, 400, -32600, 'Bad Request: Mcp-Session-Id header is required');
    }
    const session = await this.findSession(res, id, principalKey(agent));
    if (session === false) return;
    if (!session) return this.sessionNotFound(res);
    await this.deps.sessions.delete(id);
    res.statusCode = 204;
    res.end();
  }

  /** GET <path>/tools: the MCP tool descriptors this request's agent may use. */
  async handleToolList(req: McpRequest, res: ServerResponse): Promise<void> {
    const agent = await this.authenticate(req, res);
    if (!agent) return;
    const terminal = await this.terminalOf(
      this.deps.dispatcher.dispatch({ jsonrpc: '2.0', id: 0, method: 'tools/list' }, agent, {
        logger: this.dispatchLogger,
      }),
    );
    const result =
      terminal?.kind === 'response'
        ? (terminal.message.result as { tools?: unknown } | undefined)
        : undefined;
    if (!result || !Array.isArray(result.tools)) {
      if (terminal?.kind === 'response' && terminal.status === 401) return sendUnauthorized(res);
      return sendJsonRpcError(res, 500, -32603, 'Internal error');
    }
    sendJson(res, 200, result.tools);
  }

  /**
   * Runs agentFactory and builds the agent. Refusals answer the fixed 401 body (the log line names
   * the error's class, its `reason` and the request id, never its message); other failures a 500
   * "Internal error" with only the error's class logged.
   */
  protected async authenticate(
    req: McpRequest,
    res: ServerResponse,
  ): Promise<ParseAgent | undefined> {
    try {
      const produced = await this.agentFactory(req);
      if (produced instanceof ParseAgent) return produced;
      const options = produced ?? {};
      // Without createValidated, create() refuses validateSession (fail closed: 500).
      return options.validateSession === true && this.deps.agents.createValidated
        ? await this.deps.agents.createValidated(options)
        : this.deps.agents.create(options);
    } catch (error) {
      const name = errorClassName(error);
      if (error instanceof AgentUnauthorizedError) {
        this.deps.logger.warn(unauthorizedLogLine(name, error.reason, requestIdOf(req, res)));
        sendUnauthorized(res);
      } else {
        const frames = error instanceof Error ? stackFrames(error) : '';
        this.deps.logger.warn(`Factory error: ${name}${frames ? `\n${frames}` : ''}`);
        sendJsonRpcError(res, 500, -32603, 'Internal error');
      }
      return undefined;
    }
  }

  /**
   * Whom the request acts for (`mcp.userKey`, else derived from the agent), as an opaque key;
   * undefined after answering: 401 when Parse rejects the session token, 503 when it cannot tell.
   */
  protected async userOf(
    req: McpRequest,
    res: ServerResponse,
    agent: ParseAgent,
    requestId: JsonRpcId,
  ): Promise<string | undefined> {
    try {
      const own = await this.deps.options.userKey?.(req, agent);
      if (typeof own === 'string' && own) return UserKeys.ofHostKey(own);
      return await this.deps.userKeys.of(agent);
    } catch (error) {
      if (error instanceof AgentUnauthorizedError) {
        this.deps.logger.warn(
          unauthorizedLogLine(errorClassName(error), error.reason, requestIdOf(req, res)),
        );
        sendUnauthorized(res);
      } else if (error instanceof UserUnresolvedError) {
        sendJsonRpcError(res, 503, -32000, error.message, {
          id: requestId,
          headers: { 'Retry-After': String(error.retryAfter) },
        });
      } else {
        this.deps.logger.warn(`userKey error: ${errorClassName(error)}`);
        sendJsonRpcError(res, 500, -32603, 'Internal error', { id: requestId });
      }
      return undefined;
    }
  }

  /** Charges one initialize to the user's window; false after answering 429. */
  protected async admitInitialize(
    res: ServerResponse,
    user: string,
    requestId: JsonRpcId,
  ): Promise<boolean> {
    const limiter = this.deps.initializeLimiter;
    if (!limiter) return true;
    try {
      await checkRateLimit(limiter, `mcp-initialize:${user}`, (error) =>
        this.deps.logger.warn(`initialize rate limiter failure: ${errorClassName(error)}`),
      );
      return true;
    } catch (error) {
      if (!(error instanceof RateLimitExceededError)) throw error;
      const retryAfter = Math.max(1, Math.ceil(error.retryAfter));
      const message =
        error.constructor === RateLimitExceededError
          ? `Too many initialize requests for this user (at most ${error.limit} per ${error.window}s): keep using an open session (Mcp-Session-Id) instead of starting new ones; retry after ${retryAfter}s.`
          : error.message;
      sendJsonRpcError(res, 429, -32000, message, {
        id: requestId,
        headers: { 'Retry-After': String(retryAfter) },
      });
      return false;
    }
  }

  /** The session a request names: undefined (none named), or false after answering 404. */
  protected async resolveSession(
    req: McpRequest,
    res: ServerResponse,
    owner: string,
    requestId: JsonRpcId = null,
  ): Promise<McpSession | undefined | false> {
    const id = headerValue(req, HEADER.sessionId);
    if (id === undefined) return undefined; // stateless clients are welcome
    const session = await this.findSession(res, id, owner, requestId);
    if (session === false) return false;
    if (!session) {
      this.sessionNotFound(res, requestId);
      return false;
    }
    return session;
  }

  /**
   * The session, undefined when it does not exist, or false once a 503 was sent because the store
   * cannot tell (a live session is never declared gone because its store was slow).
   */
  protected async findSession(
    res: ServerResponse,
    id: string,
    owner: string,
    requestId: JsonRpcId = null,
  ): Promise<McpSession | undefined | false> {
    try {
      return await this.deps.sessions.get(id, owner);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      sendJsonRpcError(res, 503, -32000, `Service Unavailable: ${error.message}`, {
        id: requestId,
        headers: { 'Retry-After': String(error.retryAfter) },
      });
      return false;
    }
  }

  /** 404 echoing the request's id, so the client can tell which call to restart. */
  protected sessionNotFound(res: ServerResponse, requestId: JsonRpcId = null): void {
    sendJsonRpcError(res, 404, -32000, 'Session not found: start a new session with initialize', {
      id: requestId,
    });
  }

  /**
   * The correlation id (audit events, cancellation scope): the factory's own, else the spec's
   * X-MCP-Session-Id header (sanitised by the agent), else the Streamable HTTP session id.
   */
  protected bindCorrelation(agent: ParseAgent, req: McpRequest, session?: McpSession): void {
    if (agent.correlationId) return;
    const header = headerValue(req, HEADER.correlationId);
    if (header) agent.correlationId = header;
    if (!agent.correlationId && session) agent.correlationId = session.id;
  }

  protected async serveJson(
    res: ServerResponse,
    body: Record<string, unknown>,
    agent: ParseAgent,
    scope: string | undefined,
    requestId: JsonRpcId,
    extra: { headers: Record<string, string>; session?: McpSession; modern?: ModernEnvelope },
  ): Promise<void> {
    const controller = new AbortController();
    const deregister = scope
      ? this.deps.cancellations.register(scope, requestId, controller)
      : () => undefined;
    const untrack = this.track(controller);
    let terminal: DispatchTerminal | undefined;
    try {
      terminal = await this.jsonTerminal(
        this.dispatchFor(body, agent, extra.modern, {
          signal: controller.signal,
          logger: this.dispatchLogger,
        }),
        res,
        controller,
      );
    } catch (error) {
      this.dispatchLogger.error(`MCP dispatch failed: ${errorClassName(error)}`, error);
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
      deregister();
      untrack();
    }
    if (!terminal && this.shuttingDown && !res.writableEnded) {
      return sendJsonRpcError(res, 503, SHUTTING_DOWN_CODE, SHUTTING_DOWN_MESSAGE, {
        id: requestId,
        headers: { Connection: 'close' },
      });
    }
    if (!terminal || res.writableEnded) return; // the client left
    if (terminal.kind === 'accepted') return sendJson(res, 202, undefined);
    const failed = terminal.message.error !== undefined;
    if (failed && extra.session) {
      // No session for a failed initialize.
      await this.deps.sessions.delete(extra.session.id);
      delete extra.headers[RESPONSE_HEADER.sessionId];
    }
    sendJson(res, terminal.status, terminal.message, extra.headers);
  }

  protected serveStream(
    req: McpRequest,
    res: ServerResponse,
    body: Record<string, unknown>,
    agent: ParseAgent,
    scope: string | undefined,
    requestId: JsonRpcId,
    headers: Record<string, string>,
    session: McpSession | undefined,
    owner: string,
    modern?: ModernEnvelope,
  ): void {
    const cap = this.deps.options.maxConcurrentStreams;
    if (this.activeStreams >= cap) {
      return sendJsonRpcError(res, 503, -32000, 'server busy', { id: requestId });
    }
    const controller = new AbortController();
    const deregister = scope
      ? this.deps.cancellations.register(scope, requestId, controller)
      : () => undefined;
    this.activeStreams++;
    const untrack = this.track(controller);
    const store = this.deps.events;
    const streamId = store ? newStreamId(owner) : undefined;
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
      this.activeStreams--;
      deregister();
      untrack();
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
      if (!answered && this.shuttingDown) {
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

    this.openEventStream(req, res, headers);
    const token = progressTokenOf(body);
    // Tool calls of a session whose client can answer may ask the person on this stream.
    const questions = new Subject<SseFrame>();
    const elicitation =
      body.method === 'tools/call' && !modern && session && this.elicitations.supports(session)
        ? this.elicitations.channel(session.id, questions)
        : undefined;
    const clientLeft$ = fromEvent(res, 'close').pipe(filter(() => !resumable));
    this.dispatchFor(body, agent, modern, {
      signal: controller.signal,
      logger: this.dispatchLogger,
      elicitation,
    })
      .pipe(
        toSseFrames(requestId, (error) =>
          this.dispatchLogger.error(`MCP dispatch failed: ${errorClassName(error)}`, error),
        ),
        withHeartbeats(this.deps.options.heartbeatIntervalMs, token),
        // 2026-07-28 clients hear list changes only on their subscriptions/listen streams.
        mergeWhileActive(modern ? questions : merge(this.listChangedFrames(), questions)),
        store && streamId
          ? withEventIds(store, streamId, (error) =>
              this.deps.logger.warn(
                `Resumable stream: an event could not be stored (${errorClassName(error)}); it was sent without an id`,
              ),
            )
          : (frames$: Observable<SseFrame>) => frames$,
        abortOnUnsubscribe(controller, 'client_disconnect'),
        takeUntil(merge(clientLeft$, this.shutdown$)),
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

  /**
   * GET with `Last-Event-ID`: the events of that call's stream the client missed, then (when the
   * call still runs, here or on another node) the rest as they come, until its response.
   */
  protected async resumeStream(
    req: McpRequest,
    res: ServerResponse,
    owner: string,
    lastEventId: string,
    store: EventStore,
    session: McpSession | undefined,
  ): Promise<void> {
    const streamId = splitEventId(lastEventId)?.streamId;
    const notFound = () =>
      sendJsonRpcError(
        res,
        404,
        -32000,
        'Event stream not found: the events expired or belong to another caller; send the call again',
      );
    // Another principal's stream is answered exactly like an unknown one.
    if (!streamId || !streamOwnedBy(streamId, owner)) return notFound();
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
      this.dispatchLogger.error(`Resuming a stream failed: ${errorClassName(error)}`, error);
      return sendJsonRpcError(res, 503, -32000, 'Event store unavailable: retry shortly', {
        headers: { 'Retry-After': '1' },
      });
    }
    this.openEventStream(req, res);
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
      idle = setTimeout(end, this.deps.options.eventRetentionMs);
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
    const closed$ = merge(fromEvent(res, 'close'), this.shutdown$, done$, session?.ended$ ?? NEVER);
    interval(this.deps.options.heartbeatIntervalMs)
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

  protected openEventStream(
    req: McpRequest,
    res: ServerResponse,
    headers: Record<string, string> = {},
  ): void {
    const sse: Record<string, string> = { ...SSE_HEADERS, ...headers };
    // Connection-specific headers are not allowed on HTTP/2.
    if ((req.httpVersionMajor ?? 1) >= 2) delete sse.Connection;
    res.writeHead(200, sse);
    res.flushHeaders();
  }

  /** The dispatch of one request: 2026-07-28 requests are unwrapped and their results stamped. */
  protected dispatchFor(
    body: Record<string, unknown>,
    agent: ParseAgent,
    modern: ModernEnvelope | undefined,
    context: DispatchContext,
  ): Observable<DispatchMessage> {
    return modern
      ? dispatchModern(this.deps.dispatcher, body, agent, context)
      : this.deps.dispatcher.dispatch(body, agent, context);
  }

  /**
   * POST subscriptions/listen (2026-07-28): an SSE stream acknowledging the honoured filter, then
   * the list changes it asked for, until the client leaves or the server shuts down. Counts
   * against the same per-principal cap as GET streams.
   */
  protected serveListen(
    req: McpRequest,
    res: ServerResponse,
    body: Record<string, unknown>,
    agent: ParseAgent,
    owner: string,
    requestId: JsonRpcId,
  ): void {
    if (!this.deps.options.streaming || !acceptsEventStream(req.headers.accept)) {
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
      body,
      requestId,
      owner,
      streams: this.getStreams,
      open: () => this.openEventStream(req, res),
      toolChanges$: this.deps.toolChanges$,
      promptChanges$: this.deps.promptChanges$,
      shutdown$: this.shutdown$,
      heartbeatIntervalMs: this.deps.options.heartbeatIntervalMs,
      serverInfo: () => serverInfoOf(this.deps.dispatcher, agent),
    });
  }

  protected listChangedFrames(): Observable<SseFrame> {
    return notificationFrames(
      this.deps.toolChanges$.pipe(map(() => TOOLS_CHANGED)),
      this.deps.promptChanges$.pipe(map(() => PROMPTS_CHANGED)),
    );
  }

  /**
   * The response of a call answered as JSON, or undefined when the client leaves or the endpoint
   * shuts down first (the call is then cancelled with reason client_disconnect). Written out
   * rather than as an operator chain: this runs once per JSON request.
   */
  protected jsonTerminal(
    dispatch$: Observable<DispatchMessage>,
    res: ServerResponse,
    controller: AbortController,
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
      const shutdown = this.shutdown$.subscribe(stop);
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

  /** The dispatch's last item (undefined when it ended without one, e.g. the client left). */
  protected terminalOf(
    dispatch$: Observable<DispatchMessage>,
  ): Promise<DispatchTerminal | undefined> {
    return lastValueFrom(
      dispatch$.pipe(filter((item): item is DispatchTerminal => item.kind !== 'notification')),
      { defaultValue: undefined },
    );
  }
}

/** Emits values while `predicate` holds, and the first value that fails it, then completes. */
function takeWhileInclusive<T>(predicate: (value: T) => boolean): MonoTypeOperatorFunction<T> {
  return takeWhile(predicate, true);
}

function validId(value: unknown): JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
    ? value
    : null;
}

function headerValue(req: McpRequest, name: string): string | undefined {
  const value = req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text.trim();
}

function progressTokenOf(body: Record<string, unknown>): ProgressToken | undefined {
  const params = body.params as Record<string, unknown> | undefined;
  const meta = params && typeof params === 'object' ? params._meta : undefined;
  const token =
    meta && typeof meta === 'object' ? (meta as Record<string, unknown>).progressToken : undefined;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

function errorClassName(error: unknown): string {
  if (error instanceof Error) return error.constructor?.name || error.name || 'Error';
  return typeof error;
}

/** Stack frames without the first line (which carries the message). */
function stackFrames(error: Error): string {
  return (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 5)
    .join('\n');
}
