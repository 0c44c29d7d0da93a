import type { ServerResponse } from 'node:http';
import { filter, lastValueFrom, Subject } from 'rxjs';
import { ParseAgentConfigError } from '../../core/errors';
import type { ParseAgent } from '../../agent/parse-agent';
import type { DispatchTerminal } from '../../mcp/mcp-dispatcher';
import { classifyEra, LISTEN_METHOD } from '../../mcp/modern-revision';
import type { McpSession } from '../../ports/session-store';
import { cancellationScope } from '../shared/calls-in-flight';
import type { McpTransport, McpTransportContext } from '../shared/mcp-transport';
import { relayCancel, settleAnswer } from './client-messages';
import {
  createHttpEndpoint,
  type HttpCall,
  type HttpEndpoint,
  type McpHttpHandlerDependencies,
} from './http-endpoint';
import { HttpSessions, sendRateRefusal } from './http-sessions';
import { serveJsonCall } from './json-call';
import { HEADER, RESPONSE_HEADER } from './mcp-http.constants';
import { sendJson, sendJsonRpcError, sendUnauthorized } from './mcp-http-response';
import type { McpGateState, McpRequest } from './mcp-request';
import { headerValue, validId } from './mcp-request-fields';
import { serveListenCall, serveNotificationStream } from './notification-stream';
import { PrincipalStreams } from './principal-streams';
import { agentForRequest, type McpAgentFactory } from './request-agent';
import { serveSseCall } from './sse-call';
import { resumeStream } from './stream-resumption';
import { acceptsEventStream } from './transport-checks';

/** Methods answered over SSE when the client accepts it. */
const STREAMED_METHODS = new Set(['tools/call', 'resources/read']);

/**
 * Streamable HTTP for one MCP endpoint, on Node's request and response (Express hands them over
 * as they are; Fastify's are `request.raw` and `reply.raw`). After the gate's transport checks and
 * the host's guards it builds the request's agent, admits sessions, charges, correlates, and hands
 * the call to the part that answers it: JSON (json-call), SSE (sse-call), a resumed stream
 * (stream-resumption) or a notification stream (notification-stream). `hostRequest` is the request
 * object the host's guards saw (Fastify's request); agentFactory and userKey receive it.
 */
export class McpHttpHandler implements McpTransport {
  readonly kind = 'streamable-http';
  protected readonly agentFactory: McpAgentFactory;
  /** GET and listen streams open per principal (this process). */
  protected readonly getStreams: PrincipalStreams;
  /** List changes the host reports (notifyListChanged), heard by the endpoint's streams. */
  protected readonly toolChanges = new Subject<void>();
  protected readonly promptChanges = new Subject<void>();
  /** Set by start(): the host's context and what the endpoint builds on it. */
  protected context?: McpTransportContext;
  protected endpoint!: HttpEndpoint;
  protected sessionLifecycle!: HttpSessions;

  constructor(protected readonly deps: McpHttpHandlerDependencies) {
    if (typeof deps.agentFactory !== 'function') {
      throw new ParseAgentConfigError(
        'ParseAgentModule.forRoot: the mcp endpoint needs an agentFactory(request) option returning the agent options for the authenticated request (throw AgentUnauthorizedError to refuse).',
      );
    }
    this.agentFactory = deps.agentFactory;
    this.getStreams = new PrincipalStreams(deps.options.maxGetStreamsPerPrincipal);
  }

  /** Takes the host's context: the endpoint answers 503 until then. */
  start(context: McpTransportContext): void {
    if (this.context) throw new ParseAgentConfigError('The MCP HTTP endpoint was started twice.');
    this.context = context;
    this.endpoint = createHttpEndpoint(this.deps, context, {
      tools$: this.toolChanges,
      prompts$: this.promptChanges,
    });
    const { logger, elicitations } = this.endpoint;
    this.sessionLifecycle = new HttpSessions({
      options: this.deps.options,
      sessions: context.sessions,
      userKeys: context.userKeys,
      principalKey: context.principalKey,
      initializeLimiter: this.deps.initializeLimiter,
      elicitations,
      logger,
    });
    // Answers to this node's questions that clients POSTed to another node.
    context.cancellations.onAnswer?.((sessionId, response) =>
      elicitations.settle(response, sessionId, response.owner),
    );
  }

  notifyListChanged(kind: 'tools' | 'prompts'): void {
    (kind === 'tools' ? this.toolChanges : this.promptChanges).next();
  }

  /** Streaming tool calls in flight on this endpoint. */
  get openStreams(): number {
    return this.context ? this.endpoint.streamCalls.active : 0;
  }

  /** Streaming calls whose client disconnected before the answer, since the endpoint started. */
  get abandonedStreams(): number {
    return this.context ? this.endpoint.streamCalls.abandoned : 0;
  }

  /** Whether the endpoint is draining for shutdown (new calls are refused with 503). */
  get shuttingDown(): boolean {
    return this.context ? this.endpoint.drain.active : false;
  }

  /** Calls in flight on this endpoint (JSON and streaming). */
  get callsInFlight(): number {
    return this.context ? this.endpoint.calls.size : 0;
  }

  /** Graceful stop (see EndpointDrain.drain). Idempotent. */
  async drain(gracePeriodMs?: number): Promise<void> {
    if (this.context) await this.endpoint.drain.drain(gracePeriodMs);
  }

  close(): Promise<void> {
    return this.drain();
  }

  /** POST: one JSON-RPC message in, a JSON body or an SSE stream out. */
  async handlePost(
    req: McpRequest,
    res: ServerResponse,
    hostRequest: McpRequest = req,
  ): Promise<void> {
    if (!this.context) return sendNotStarted(res);
    const { gate } = this.deps;
    let state = await gate.ensure(req, res);
    if (!state) return;
    let agent: ParseAgent | undefined;
    if (state.deferred) {
      // A body over the pre-auth limit is read only once the caller is authenticated.
      agent = await this.authenticate(hostRequest, res);
      if (!agent) return;
      state = await gate.completeBody(req, res);
      if (!state) return;
    }
    const { body, kind } = state as Required<Pick<McpGateState, 'body' | 'kind'>>;
    const bodyId = validId(body.id);
    // 2026-07-28 requests carry their revision per request and need no session.
    const era = classifyEra(body, {
      // initialize negotiates its revision from the body: the header has no say there.
      protocolVersion:
        body.method === 'initialize' ? undefined : headerValue(req, HEADER.protocolVersion),
      method: headerValue(req, HEADER.method),
      name: headerValue(req, HEADER.name),
    });
    if (era.era === 'refused') return sendJson(res, era.status, era.message);
    const modern = era.era === 'modern' && kind === 'request' ? era.envelope : undefined;
    if (this.endpoint.drain.refuse(res, bodyId)) return;
    agent ??= await this.authenticate(hostRequest, res);
    if (!agent) return;
    const principal = await this.sessionLifecycle.ownerOf(hostRequest, res, agent, bodyId);
    if (!principal) return;
    const { owner, hostKey } = principal;
    const isRequest = kind === 'request';
    const initialize = isRequest && body.method === 'initialize';

    let user: string | undefined;
    if (initialize) {
      user = await this.sessionLifecycle.admitInitialize(hostRequest, res, agent, bodyId, hostKey);
      if (user === undefined) return;
    }
    // Methods that do work without running a tool count against the caller's rate limit too.
    const charging = isRequest ? this.context.charge(agent, body.method) : undefined;
    const refused = charging && (await charging);
    if (refused) return sendRateRefusal(res, refused, bodyId);

    const headers: Record<string, string> = {};
    let session: McpSession | undefined;
    if (this.deps.options.sessions && era.era !== 'modern') {
      if (initialize) {
        session = await this.sessionLifecycle.open(res, owner, user, body.params, bodyId);
        if (!session) return;
        headers[RESPONSE_HEADER.sessionId] = session.id;
      } else {
        // A tool call's rate charge goes out with the session check (one Redis round trip, not
        // two in a row); it counts even if the session turns out unknown.
        const prepaid =
          isRequest && body.method === 'tools/call' && headerValue(req, HEADER.sessionId)
            ? agent.prepayRateLimit()
            : undefined;
        if (prepaid) res.once('close', () => agent.dropPrepaid(prepaid));
        const resolved = await this.sessionLifecycle.resolve(req, res, owner, bodyId);
        if (resolved === false) return;
        session = resolved;
      }
    }
    this.sessionLifecycle.bindCorrelation(agent, req, session);
    const scope = cancellationScope(owner, agent.correlationId);

    if (body.method === 'notifications/cancelled') {
      await relayCancel(this.endpoint, scope, body);
      return sendJson(res, 202, undefined);
    }
    if (kind === 'response') {
      await settleAnswer(this.endpoint, body, session, owner);
      return sendJson(res, 202, undefined);
    }
    // Client notifications get no reply; a request method sent as a notification (no id) is not
    // run at all.
    if (!isRequest) return sendJson(res, 202, undefined);

    const call: HttpCall = {
      req,
      res,
      body,
      agent,
      owner,
      requestId: bodyId,
      scope,
      session,
      headers,
      modern,
    };
    if (modern && body.method === LISTEN_METHOD) {
      return serveListenCall(this.endpoint, { ...call, streams: this.getStreams });
    }
    // Only calls that run a tool can report progress or take long; everything else (initialize,
    // tools/list, ping...) is answered as plain JSON, which the Streamable HTTP spec allows.
    const streaming =
      this.deps.options.streaming &&
      STREAMED_METHODS.has(String(body.method)) &&
      acceptsEventStream(req.headers.accept);
    if (streaming) return serveSseCall(this.endpoint, call);
    return serveJsonCall(this.endpoint, call);
  }

  /** GET: the standalone notification stream, or with Last-Event-ID a resumed call stream. */
  async handleGet(
    req: McpRequest,
    res: ServerResponse,
    hostRequest: McpRequest = req,
  ): Promise<void> {
    if (!(await this.passGate(req, res))) return;
    if (this.endpoint.drain.refuse(res)) return;
    const caller = await this.caller(hostRequest, res);
    if (!caller) return;
    const { agent, owner } = caller;
    let session: McpSession | undefined;
    if (this.deps.options.sessions) {
      const resolved = await this.sessionLifecycle.resolve(req, res, owner);
      if (resolved === false) return;
      session = resolved;
    }
    const lastEventId = headerValue(req, HEADER.lastEventId);
    const store = this.deps.events;
    if (lastEventId !== undefined && store) {
      return resumeStream(this.endpoint, { req, res, owner, lastEventId, store, session });
    }
    serveNotificationStream(this.endpoint, {
      req,
      res,
      owner,
      session,
      streams: this.getStreams,
      agent,
    });
  }

  /** DELETE: ends the session named by Mcp-Session-Id (its streams close). */
  async handleDelete(
    req: McpRequest,
    res: ServerResponse,
    hostRequest: McpRequest = req,
  ): Promise<void> {
    if (!(await this.passGate(req, res))) return;
    const caller = await this.caller(hostRequest, res);
    if (!caller) return;
    await this.sessionLifecycle.end(req, res, caller.owner);
  }

  /** GET <path>/tools: the MCP tool descriptors this request's agent may use. */
  async handleToolList(
    req: McpRequest,
    res: ServerResponse,
    hostRequest: McpRequest = req,
  ): Promise<void> {
    if (!this.context) return sendNotStarted(res);
    const agent = await this.authenticate(hostRequest, res);
    if (!agent) return;
    const terminal = await lastValueFrom(
      this.endpoint.dispatcher
        .dispatch({ jsonrpc: '2.0', id: 0, method: 'tools/list' }, agent, {
          logger: this.endpoint.dispatchLogger,
        })
        .pipe(filter((item): item is DispatchTerminal => item.kind !== 'notification')),
      { defaultValue: undefined },
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

  /** The gate's transport checks on a started endpoint; undefined once a refusal was sent. */
  protected async passGate(
    req: McpRequest,
    res: ServerResponse,
  ): Promise<McpGateState | undefined> {
    if (!this.context) {
      sendNotStarted(res);
      return undefined;
    }
    return this.deps.gate.ensure(req, res);
  }

  /** The request's agent and the principal it acts for; undefined once a refusal was sent. */
  protected async caller(
    hostRequest: McpRequest,
    res: ServerResponse,
  ): Promise<{ agent: ParseAgent; owner: string } | undefined> {
    const agent = await this.authenticate(hostRequest, res);
    if (!agent) return undefined;
    const owner = (await this.sessionLifecycle.ownerOf(hostRequest, res, agent))?.owner;
    return owner ? { agent, owner } : undefined;
  }

  /** The request's agent (see agentForRequest); undefined once a refusal was sent. */
  protected authenticate(
    hostRequest: McpRequest,
    res: ServerResponse,
  ): Promise<ParseAgent | undefined> {
    return agentForRequest(
      { agentFactory: this.agentFactory, context: this.context!, logger: this.endpoint.logger },
      hostRequest,
      res,
    );
  }
}

/** A request before the host started the transport (it starts during the application's bootstrap). */
function sendNotStarted(res: ServerResponse): void {
  sendJsonRpcError(res, 503, -32000, 'Service Unavailable: the MCP endpoint is starting.', {
    headers: { 'Retry-After': '1' },
  });
}
