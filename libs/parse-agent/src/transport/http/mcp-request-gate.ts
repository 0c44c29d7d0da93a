import type { IncomingMessage, ServerResponse } from 'node:http';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../mcp/protocol.constants';
import { McpBodyReader } from './mcp-body-reader';
import {
  McpCallerCheck,
  stripUnderscoreHeaders,
  type McpGateEnvironment,
} from './mcp-caller-check';
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import { HEADER, MCP_GATE_STATE } from './mcp-http.constants';
import { sendJsonRpcError } from './mcp-http-response';
import type { McpGateState, McpRequest } from './mcp-request';
import { checkPreAuthRate } from './pre-auth-rate';
import { headerValue, validId } from './mcp-request-fields';
import { acceptsEventStream, mediaType } from './transport-checks';
import type { TransportLogger } from '../shared/transport-logger';

type Next = (error?: unknown) => void;

const SUPPORTED_VERSIONS_TEXT = SUPPORTED_PROTOCOL_VERSIONS.join(', ');

/**
 * The endpoint's transport checks, in the spec's order and before any authentication: it is
 * installed on the HTTP adapter ahead of the platform's body parsing and of every guard (Express
 * middleware, or a Fastify onRequest hook; see `screen`), reads the body
 * itself (size cap, exact parse errors) and answers refusals directly. The controller runs the
 * same checks when a request reaches it without passing here (see `ensure`).
 */
export class McpRequestGate {
  /** The HTTP methods the endpoint answers (see allowedMethods). */
  protected allowed?: readonly string[];
  protected readonly caller: McpCallerCheck;
  protected readonly bodies: McpBodyReader;

  constructor(
    protected readonly options: ResolvedMcpEndpointOptions,
    protected readonly logger: TransportLogger,
    environment: McpGateEnvironment = {},
  ) {
    this.caller = new McpCallerCheck(options, logger, environment);
    this.bodies = new McpBodyReader(options, logger);
  }

  /** Connect/Express-style middleware for the whole app; requests to other paths pass untouched. */
  readonly middleware = (req: IncomingMessage, res: ServerResponse, next: Next): void =>
    this.screen(req, res, next);

  /**
   * Runs the transport checks for one request of the app: `next()` when it may go on (another
   * path, or accepted), `answered()` when a refusal was sent (or the client left mid-upload),
   * `next(error)` on an unexpected failure. The platform adapters build on this (Express's
   * middleware, Fastify's onRequest hook). `hostRoute` says whether the host app has a route of
   * its own for the request: a path under the endpoint that neither the endpoint nor the host
   * serves gets a JSON-RPC 404, not the platform's default page.
   */
  screen(
    req: IncomingMessage,
    res: ServerResponse,
    next: Next,
    answered?: () => void,
    hostRoute?: () => boolean,
  ): void {
    const route = this.caller.routeOf(req);
    if (!route) return next();
    const request = req as McpRequest;
    // A real CORS preflight belongs to the host's CORS middleware.
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) return next();
    if (route === 'beneath') {
      if (hostRoute?.()) return next();
      sendJsonRpcError(
        res,
        404,
        -32601,
        `Not Found: the MCP endpoint has no route here; send JSON-RPC messages to ${this.caller.endpointPath()} (GET ${this.caller.endpointPath().replace(/\/$/, '')}/tools lists the tools).`,
      );
      return answered?.();
    }
    if (route === 'tools') {
      stripUnderscoreHeaders(request);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendJsonRpcError(res, 405, -32700, 'method_not_allowed', { headers: { Allow: 'GET' } });
        return answered?.();
      }
      if (!this.caller.check(request, res)) return answered?.();
      return next();
    }
    this.inspect(request, res).then(
      (state) => {
        if (!state) return answered?.();
        this.accept(request, state, res);
        next();
      },
      // An upload the client abandoned resolves (ABORTED), not rejects: it is logged by the reader.
      (error: unknown) => next(error),
    );
  }

  /**
   * The gate state of a request that reached the controller; when the middleware did not run for it
   * (an unusual mount), runs the checks now. Undefined means a refusal was already sent.
   */
  async ensure(req: McpRequest, res: ServerResponse): Promise<McpGateState | undefined> {
    const existing = req[MCP_GATE_STATE];
    if (existing) return existing;
    // Here the host's guards have already run: the full body limit applies.
    const state = await this.inspect(req, res, { authenticated: true });
    if (state) this.accept(req, state, res);
    return state;
  }

  /**
   * Reads the rest of a deferred body, once the caller is authenticated, up to `maxBodyBytes` in
   * all; then the same parse and shape checks as any body. Undefined means a refusal was sent.
   */
  async completeBody(req: McpRequest, res: ServerResponse): Promise<McpGateState | undefined> {
    const deferred = req[MCP_GATE_STATE]?.deferred;
    if (!deferred) return req[MCP_GATE_STATE];
    const state: McpGateState | undefined = await this.bodies.complete(req, deferred, res);
    if (!state) return undefined;
    if (!this.versionAccepted(req, res, state.body)) return undefined;
    this.accept(req, state, res);
    return state;
  }

  /** Runs every transport check; answers the refusal and resolves undefined when one fails. */
  async inspect(
    req: McpRequest,
    res: ServerResponse,
    phase: { authenticated?: boolean } = {},
  ): Promise<McpGateState | undefined> {
    stripUnderscoreHeaders(req);

    const refusal = await checkPreAuthRate(this.options.preAuthRateLimiter, req);
    if (refusal) {
      sendJsonRpcError(res, refusal.status, -32000, refusal.message, {
        headers: { 'Retry-After': String(refusal.retryAfter) },
      });
      return undefined;
    }

    const method = req.method ?? '';
    const allowed = this.allowedMethods();
    if (!allowed.includes(method)) {
      sendJsonRpcError(res, 405, -32700, 'method_not_allowed', {
        headers: { Allow: allowed.join(', ') },
      });
      return undefined;
    }
    if (method === 'POST' && mediaType(req.headers['content-type']) !== 'application/json') {
      sendJsonRpcError(
        res,
        415,
        -32700,
        'Unsupported Media Type: Content-Type must be application/json',
      );
      return undefined;
    }
    if (!this.caller.check(req, res)) return undefined;

    const state: McpGateState = {};
    if (method === 'POST') {
      const body = await this.bodies.read(req, res, phase.authenticated === true);
      if (!body) return undefined;
      Object.assign(state, body);
    }
    if (method === 'GET' && !acceptsEventStream(req.headers.accept)) {
      sendJsonRpcError(res, 406, -32700, 'Not Acceptable: Accept must include text/event-stream');
      return undefined;
    }
    // A deferred body is checked once read (completeBody): the message decides.
    if (!state.deferred && !this.versionAccepted(req, res, state.body)) return undefined;
    return state;
  }

  /**
   * MCP-Protocol-Version: absent or empty is the default revision; a supported one goes on. An
   * unsupported one is refused with 400, except on `initialize` (the revision is negotiated from
   * the body, and the answer names the one the server speaks) and `notifications/cancelled` (a
   * cancel is never lost to a header). False after answering the refusal.
   */
  protected versionAccepted(
    req: McpRequest,
    res: ServerResponse,
    body: Record<string, unknown> | undefined,
  ): boolean {
    const version = headerValue(req, HEADER.protocolVersion);
    if (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return true;
    if (body?.method === 'initialize' || body?.method === 'notifications/cancelled') return true;
    sendJsonRpcError(
      res,
      400,
      -32600,
      `Bad Request: unsupported MCP-Protocol-Version (supported: ${SUPPORTED_VERSIONS_TEXT})`,
      { id: validId(body?.id) },
    );
    return false;
  }

  /** POST always; GET for the server stream when streaming; DELETE to end sessions. */
  allowedMethods(): readonly string[] {
    // The options are fixed once resolved: computed on the first request.
    return (this.allowed ??= [
      'POST',
      ...(this.options.streaming ? ['GET'] : []),
      ...(this.options.sessions ? ['DELETE'] : []),
    ]);
  }

  protected accept(req: McpRequest, state: McpGateState, res: ServerResponse): void {
    req[MCP_GATE_STATE] = state;
    if (state.body !== undefined) {
      req.body = state.body;
      // Tells body-parser (Nest's JSON parser) the body is already read.
      req._body = true;
    } else if (state.deferred) {
      // No parser may read it before the guards: body parsers (Nest's included) only read a body
      // whose Content-Type they handle, so it is held back until completeBody. A refusal then
      // closes the connection instead of draining the unread upload.
      state.deferred.contentType = req.headers['content-type'];
      delete req.headers['content-type'];
      res.setHeader('Connection', 'close');
    }
  }
}
