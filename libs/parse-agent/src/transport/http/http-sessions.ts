import type { ServerResponse } from 'node:http';
import type { ParseAgent } from '../../agent/parse-agent';
import type { AgentIdentity } from '../../core/agent-identity';
import {
  AgentUnauthorizedError,
  RateLimitExceededError,
  RateLimiterUnavailableError,
  StoreUnavailableError,
} from '../../core/errors';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import { checkRateLimit, type RateLimiter } from '../../ports/rate-limiter';
import { SessionLimitError, type McpSession, type SessionStore } from '../../ports/session-store';
import { errorClassName } from '../shared/mcp-transport';
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import { HEADER } from './mcp-http.constants';
import { sendJsonRpcError, sendUnauthorized } from './mcp-http-response';
import type { McpRequest } from './mcp-request';
import { headerValue } from './mcp-request-fields';
import { declaresElicitation, type SseElicitations } from './sse-elicitation';
import type { TransportLogger } from '../shared/transport-logger';
import { requestIdOf, unauthorizedLogLine } from './unauthorized-log';
import { UserKeys, UserUnresolvedError } from '../shared/user-key';

export interface HttpSessionsDependencies {
  options: ResolvedMcpEndpointOptions;
  sessions: SessionStore;
  /** Whom a request acts for: sessions are counted and initialize limited per user. */
  userKeys: UserKeys;
  /** The principal a request acts for (the transport context's). */
  principalKey(agent: AgentIdentity, hostKey?: string): string;
  /** Limits initialize per user (absent: `initializeRateLimit: false`). */
  initializeLimiter?: RateLimiter;
  elicitations: SseElicitations;
  logger: TransportLogger;
}

/**
 * The session lifecycle of Streamable HTTP: admitting an initialize (per-user key and rate),
 * creating the session (per-user and table caps), finding the one a request names (owner-checked;
 * a store that cannot tell answers 503, never "gone"), correlation, and DELETE. Each method
 * answers its own refusal and then returns undefined or false.
 */
export class HttpSessions {
  constructor(protected readonly deps: HttpSessionsDependencies) {}

  /**
   * Whom the request acts for: the owner of its sessions, streams and cancellations (see
   * `principalKey`) and the host's own key for it (`mcp.userKey`), when the host gives one.
   * Undefined after answering: 401 or 503 as `userKey` decided, 500 when it failed otherwise.
   */
  async ownerOf(
    hostRequest: McpRequest,
    res: ServerResponse,
    agent: ParseAgent,
    requestId: JsonRpcId = null,
  ): Promise<{ owner: string; hostKey?: string } | undefined> {
    let hostKey: string | undefined;
    try {
      const own = await this.deps.options.userKey?.(hostRequest, agent);
      if (typeof own === 'string' && own) hostKey = own;
    } catch (error) {
      this.refuseUnknownUser(error, hostRequest, res, requestId);
      return undefined;
    }
    return { owner: this.deps.principalKey(agent, hostKey), hostKey };
  }

  /**
   * Admits an initialize: the user it counts against (the host's key, else derived from the
   * agent), charged to that user's initialize window. Undefined after answering: 401 when Parse
   * rejects the session token, 503 when it cannot tell, 429 over the window, 503 when the window
   * cannot be counted (its Redis store is down or stalled).
   */
  async admitInitialize(
    hostRequest: McpRequest,
    res: ServerResponse,
    agent: ParseAgent,
    requestId: JsonRpcId,
    hostKey: string | undefined,
  ): Promise<string | undefined> {
    const user = await this.userOf(hostRequest, res, agent, requestId, hostKey);
    if (user === undefined) return undefined;
    return (await this.chargeInitialize(res, user, requestId)) ? user : undefined;
  }

  /** Creates the session of an initialize; undefined after answering 429 (user) or 503 (table). */
  async open(
    res: ServerResponse,
    owner: string,
    user: string | undefined,
    params: unknown,
    requestId: JsonRpcId,
  ): Promise<McpSession | undefined> {
    let session: McpSession;
    try {
      session = await this.deps.sessions.create(owner, {
        user,
        elicitation: declaresElicitation(params),
      });
    } catch (error) {
      if (!(error instanceof SessionLimitError)) throw error;
      // The user's own cap is theirs to manage (429); a full table is the server's (503).
      sendJsonRpcError(res, error.scope === 'user' ? 429 : 503, -32000, error.message, {
        id: requestId,
        headers: { 'Retry-After': String(error.retryAfter) },
      });
      return undefined;
    }
    this.deps.elicitations.remember(session.id, session.ended$, params);
    return session;
  }

  /** The session a request names: undefined (none named), or false after answering 404/503. */
  async resolve(
    req: McpRequest,
    res: ServerResponse,
    owner: string,
    requestId: JsonRpcId = null,
  ): Promise<McpSession | undefined | false> {
    const id = headerValue(req, HEADER.sessionId);
    if (id === undefined) return undefined; // stateless clients are welcome
    const session = await this.find(res, id, owner, requestId);
    if (session === false) return false;
    if (!session) {
      this.notFound(res, requestId);
      return false;
    }
    return session;
  }

  /** DELETE: ends the session named by Mcp-Session-Id (its streams close); 204 when done. */
  async end(req: McpRequest, res: ServerResponse, owner: string): Promise<void> {
    const id = headerValue(req, HEADER.sessionId);
    if (!id) {
      return sendJsonRpcError(res, 400, -32600, 'Bad Request: Mcp-Session-Id header is required');
    }
    const session = await this.find(res, id, owner);
    if (session === false) return;
    if (!session) return this.notFound(res);
    await this.deps.sessions.delete(id);
    res.statusCode = 204;
    res.end();
  }

  /**
   * The correlation id (audit events, cancellation scope): the factory's own, else the spec's
   * X-MCP-Session-Id header (sanitised by the agent), else the Streamable HTTP session id.
   */
  bindCorrelation(agent: ParseAgent, req: McpRequest, session?: McpSession): void {
    if (agent.correlationId) return;
    const header = headerValue(req, HEADER.correlationId);
    if (header) agent.correlationId = header;
    if (!agent.correlationId && session) agent.correlationId = session.id;
  }

  /**
   * The session, undefined when it does not exist, or false once a 503 was sent because the store
   * cannot tell (a live session is never declared gone because its store was slow).
   */
  protected async find(
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
  protected notFound(res: ServerResponse, requestId: JsonRpcId = null): void {
    sendJsonRpcError(res, 404, -32000, 'Session not found: start a new session with initialize', {
      id: requestId,
    });
  }

  /** Whom the request acts for, as an opaque key; undefined after answering. */
  protected async userOf(
    hostRequest: McpRequest,
    res: ServerResponse,
    agent: ParseAgent,
    requestId: JsonRpcId,
    hostKey: string | undefined,
  ): Promise<string | undefined> {
    if (hostKey !== undefined) return UserKeys.ofHostKey(hostKey);
    try {
      return await this.deps.userKeys.of(agent);
    } catch (error) {
      this.refuseUnknownUser(error, hostRequest, res, requestId);
      return undefined;
    }
  }

  /** Answers a failure to say whom a request is for: 401, 503, or 500 for anything else. */
  protected refuseUnknownUser(
    error: unknown,
    hostRequest: McpRequest,
    res: ServerResponse,
    requestId: JsonRpcId,
  ): void {
    if (error instanceof AgentUnauthorizedError) {
      this.deps.logger.warn(
        unauthorizedLogLine(errorClassName(error), error.reason, requestIdOf(hostRequest, res)),
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
  }

  /** Charges one initialize to the user's window; false after answering 429 (or 503, see sendRateRefusal). */
  protected async chargeInitialize(
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
      const message =
        error instanceof RateLimiterUnavailableError
          ? error.message
          : `Too many initialize requests for this user (at most ${error.limit} per ${error.window}s): keep using an open session (Mcp-Session-Id) instead of starting new ones; retry after ${retryAfterSeconds(error)}s.`;
      sendRateRefusal(res, error, requestId, message);
      return false;
    }
  }
}

/** Retry-After in whole seconds, at least 1. */
function retryAfterSeconds(error: RateLimitExceededError): number {
  return Math.max(1, Math.ceil(error.retryAfter));
}

/**
 * Answers a rate-limit refusal: 429 "too many requests" for a real limit, 503 when the limiter
 * could not count (RateLimiterUnavailableError: its store is unreachable or stalled, which is the
 * server's state, not the client's rate). Both carry Retry-After and a JSON-RPC error (-32000)
 * echoing the request's id.
 */
export function sendRateRefusal(
  res: ServerResponse,
  error: RateLimitExceededError,
  requestId: JsonRpcId,
  message = error.message,
): void {
  const status = error instanceof RateLimiterUnavailableError ? 503 : 429;
  sendJsonRpcError(res, status, -32000, message, {
    id: requestId,
    headers: { 'Retry-After': String(retryAfterSeconds(error)) },
  });
}
