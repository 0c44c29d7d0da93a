import type { TransportLogger } from './transport-logger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../mcp/protocol.constants';
import { parseBoundedJson, valueNestingDepth } from './bounded-json';
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import { HEADER, MCP_GATE_STATE } from './mcp-http.constants';
import { sendJsonRpcError } from './mcp-http-response';
import { ABORTED, readLimited, type DeferredBody } from './bounded-read';
import { bodyKind, invalidRequestProblem, validIdOf, type McpBodyKind } from './json-rpc-shape';
import {
  acceptsEventStream,
  hasRequiredHeader,
  isHostAllowedOnLoopback,
  isLoopbackAddress,
  isOriginAllowed,
  mediaType,
  underscoreHeaderNames,
} from './transport-checks';

export type { McpBodyKind } from './json-rpc-shape';
export type { DeferredBody } from './bounded-read';

/** The gate's verdict, left on the request for the controller. */
export interface McpGateState {
  /** POST only: the parsed JSON-RPC message. */
  body?: Record<string, unknown>;
  kind?: McpBodyKind;
  /**
   * POST only: the body is over the pre-auth limit and waits, unread past that limit, until the
   * caller is authenticated (`McpRequestGate.completeBody`).
   */
  deferred?: DeferredBody;
}

export type McpRequest = IncomingMessage & {
  body?: unknown;
  ip?: string;
  _body?: boolean;
  [MCP_GATE_STATE]?: McpGateState;
};

type Next = (error?: unknown) => void;

const SUPPORTED_VERSIONS_TEXT = SUPPORTED_PROTOCOL_VERSIONS.join(', ');

/** Refuses invalid UTF-8; shared, since a decode without `stream` keeps no state between calls. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The endpoint's transport checks, in the spec's order and before any authentication: it is
 * installed on the HTTP adapter ahead of the platform's body parsing and of every guard (Express
 * middleware, or a Fastify onRequest hook; see `screen`), reads the body
 * itself (size cap, exact parse errors) and answers refusals directly. The controller runs the
 * same checks when a request reaches it without passing here (see `ensure`).
 */
export class McpRequestGate {
  protected endpointPaths?: { endpoint: string; tools: string };
  protected loopbackServer?: boolean;
  /** The HTTP methods the endpoint answers (see allowedMethods). */
  protected allowed?: readonly string[];

  constructor(
    protected readonly options: ResolvedMcpEndpointOptions,
    protected readonly logger: TransportLogger,
    protected readonly environment: {
      /** The app's global prefix, read when the first request arrives. */
      globalPrefix?: () => string;
      /** Address the HTTP server listens on. */
      listeningAddress?: () => AddressInfo | string | null | undefined;
    } = {},
  ) {}

  /** Connect/Express-style middleware for the whole app; requests to other paths pass untouched. */
  readonly middleware = (req: IncomingMessage, res: ServerResponse, next: Next): void =>
    this.screen(req, res, next);

  /**
   * Runs the transport checks for one request of the app: `next()` when it may go on (another
   * path, or accepted), `answered()` when a refusal was sent (or the client left mid-upload),
   * `next(error)` on an unexpected failure. The platform adapters build on this (Express's
   * middleware, Fastify's onRequest hook).
   */
  screen(req: IncomingMessage, res: ServerResponse, next: Next, answered?: () => void): void {
    const route = this.routeOf(req);
    if (!route) return next();
    const request = req as McpRequest;
    // A real CORS preflight belongs to the host's CORS middleware.
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) return next();
    if (route === 'tools') {
      stripUnderscoreHeaders(request);
      if (req.method === 'GET' && !this.checkCaller(request, res)) return answered?.();
      return next();
    }
    this.inspect(request, res).then(
      (state) => {
        if (!state) return answered?.();
        this.accept(request, state, res);
        next();
      },
      // An upload the client abandoned resolves (ABORTED), not rejects: it is logged in inspect().
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
    if (deferred.contentType !== undefined) req.headers['content-type'] = deferred.contentType;
    if (deferred.size > this.options.maxBodyBytes) {
      req.resume();
      return void this.tooLarge(res, this.options.maxBodyBytes);
    }
    const rest = await readLimited(req, this.options.maxBodyBytes - deferred.size);
    if (rest === ABORTED) return void this.aborted(res);
    if (!rest) return void this.tooLarge(res, this.options.maxBodyBytes);
    // Read in full: the connection may be kept alive again.
    res.removeHeader('Connection');
    const parsed = this.parseBody(Buffer.concat([...deferred.prefix, rest]), res);
    if (!parsed) return undefined;
    const state: McpGateState = parsed;
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

    const limiter = this.options.preAuthRateLimiter;
    if (limiter) {
      try {
        await limiter.check(`mcp:${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`);
      } catch (error) {
        const retryAfter = Number((error as { retryAfter?: unknown })?.retryAfter);
        sendJsonRpcError(res, 429, -32000, 'Too Many Requests', {
          headers: retryAfter > 0 ? { 'Retry-After': String(Math.ceil(retryAfter)) } : {},
        });
        return undefined;
      }
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
    if (!this.checkCaller(req, res)) return undefined;

    const state: McpGateState = {};
    if (method === 'POST') {
      const body = await this.readJsonBody(req, res, phase.authenticated === true);
      if (!body) return undefined;
      Object.assign(state, body);
    }
    if (method === 'GET' && !acceptsEventStream(req.headers.accept)) {
      sendJsonRpcError(res, 406, -32700, 'Not Acceptable: Accept must include text/event-stream');
      return undefined;
    }
    const version = req.headers[HEADER.protocolVersion];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version.trim())) {
      sendJsonRpcError(
        res,
        400,
        -32600,
        `Bad Request: unsupported MCP-Protocol-Version (supported: ${SUPPORTED_VERSIONS_TEXT})`,
      );
      return undefined;
    }
    return state;
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

  /** Host (DNS rebinding), Origin and the required custom header: who may call at all. */
  protected checkCaller(req: McpRequest, res: ServerResponse): boolean {
    if (
      this.listensOnLoopback(req) &&
      !isHostAllowedOnLoopback(req.headers.host, this.options.allowedHosts)
    ) {
      this.logger.warn(`Host refused: ${JSON.stringify(req.headers.host)}`);
      sendJsonRpcError(res, 403, -32700, 'Host not allowed');
      return false;
    }
    const allowedOrigins = this.options.allowedOrigins;
    if (allowedOrigins) {
      const origin = String(req.headers.origin ?? '').trim();
      if (origin && !isOriginAllowed(origin, allowedOrigins)) {
        this.logger.warn(`Origin refused: ${JSON.stringify(origin)}`);
        sendJsonRpcError(res, 403, -32700, 'Origin not allowed');
        return false;
      }
    }
    const required = this.options.requiredHeader;
    if (required && !hasRequiredHeader(req.headers[required.name], required)) {
      sendJsonRpcError(res, 403, -32700, 'Required custom header missing or invalid');
      return false;
    }
    return true;
  }

  /**
   * Size cap, JSON parse with depth cap, then the JSON-RPC shape (a method, or a client response).
   * Before authentication only `preAuthMaxBodyBytes` are read: a larger body is refused at once
   * when the request carries no credentials, else deferred until the caller is authenticated.
   */
  protected async readJsonBody(
    req: McpRequest,
    res: ServerResponse,
    authenticated: boolean,
  ): Promise<
    { body: Record<string, unknown>; kind: McpBodyKind } | { deferred: DeferredBody } | undefined
  > {
    const max = this.options.maxBodyBytes;
    const preParsed = this.preParsedBody(req);
    if (
      preParsed.present &&
      !(typeof preParsed.value === 'string' || Buffer.isBuffer(preParsed.value))
    ) {
      // Another parser consumed the stream first: apply the same limits to what it produced.
      const value = preParsed.value ?? {};
      if (Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8') > max)
        return void this.tooLarge(res, max);
      if (valueNestingDepth(value, this.options.maxJsonDepth) > this.options.maxJsonDepth)
        return void this.invalidJson(res);
      return this.shapeOf(value, res);
    }
    if (preParsed.present) {
      const raw = Buffer.isBuffer(preParsed.value)
        ? preParsed.value
        : Buffer.from(String(preParsed.value ?? ''), 'utf8');
      if (raw.length > max) return void this.tooLarge(res, max);
      return this.parseBody(raw, res);
    }

    const limit = authenticated ? max : this.options.preAuthMaxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      req.resume(); // discard, never buffer
      return void this.tooLarge(res, max);
    }
    if (limit < max && Number.isFinite(declared) && declared > limit) {
      // Nothing read yet: decide from the headers alone.
      if (!(await this.mayDefer(req))) return void this.tooLargeAnonymous(res, limit);
      return { deferred: { prefix: [], size: 0 } };
    }
    const read = await readLimited(req, limit, limit < max ? 'pause' : 'discard');
    if (read === ABORTED) return void this.aborted(res);
    if (Buffer.isBuffer(read)) return this.parseBody(read, res);
    if (read && (await this.mayDefer(req))) return { deferred: read };
    if (read) req.resume(); // refused: discard the rest
    return limit < max ? void this.tooLargeAnonymous(res, limit) : void this.tooLarge(res, max);
  }

  /** Whether a body over the pre-auth limit may wait for the guards (the host's hook decides). */
  protected async mayDefer(req: McpRequest): Promise<boolean> {
    try {
      return (await this.options.preAuthenticate(req)) === true;
    } catch (error) {
      // Fail closed: a broken hook refuses large bodies, never lets them be buffered.
      this.logger.warn(
        `preAuthenticate failed (${error instanceof Error ? error.constructor.name : typeof error}); the request is treated as carrying no credentials`,
      );
      return false;
    }
  }

  protected parseBody(
    raw: Buffer,
    res: ServerResponse,
  ): { body: Record<string, unknown>; kind: McpBodyKind } | undefined {
    let text: string;
    try {
      text = STRICT_UTF8.decode(raw);
    } catch {
      return void this.invalidJson(res);
    }
    const parsed = parseBoundedJson(text, this.options.maxJsonDepth);
    if (!parsed.ok) return void this.invalidJson(res);
    return this.shapeOf(parsed.value, res);
  }

  protected shapeOf(
    value: unknown,
    res: ServerResponse,
  ): { body: Record<string, unknown>; kind: McpBodyKind } | undefined {
    const kind = bodyKind(value);
    if (!kind) {
      const problem = invalidRequestProblem(value);
      sendJsonRpcError(res, 400, -32600, `Invalid Request${problem ? `: ${problem}` : ''}`, {
        id: validIdOf(value),
      });
      return undefined;
    }
    return { body: value as Record<string, unknown>, kind };
  }

  protected tooLarge(res: ServerResponse, max: number): void {
    sendJsonRpcError(res, 413, -32700, `Payload Too Large: body exceeds ${max} bytes`, {
      headers: { Connection: 'close' },
    });
  }

  protected tooLargeAnonymous(res: ServerResponse, limit: number): void {
    this.logger.warn(`Body over ${limit} bytes without credentials refused before reading it`);
    sendJsonRpcError(
      res,
      413,
      -32700,
      `Payload Too Large: a request without credentials may carry at most ${limit} bytes`,
      { headers: { Connection: 'close' } },
    );
  }

  protected invalidJson(res: ServerResponse): void {
    sendJsonRpcError(res, 400, -32700, 'Parse error: invalid JSON');
  }

  /** The client went away mid-upload: nothing to answer and nothing worth a stack trace. */
  protected aborted(res: ServerResponse): void {
    this.logger.warn('MCP request body aborted by the client before it was complete');
    if (!res.writableEnded) res.destroy();
  }

  protected preParsedBody(req: McpRequest): { present: boolean; value?: unknown } {
    if (req._body === true || req.readableEnded) return { present: true, value: req.body };
    return { present: false };
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

  protected routeOf(req: IncomingMessage): 'endpoint' | 'tools' | undefined {
    const paths = (this.endpointPaths ??= this.resolvePaths());
    const path = (req.url ?? '').split('?')[0].replace(/\/+$/, '').toLowerCase() || '/';
    if (path === paths.endpoint) return 'endpoint';
    if (path === paths.tools) return 'tools';
    return undefined;
  }

  protected resolvePaths(): { endpoint: string; tools: string } {
    const prefix = safely(() => this.environment.globalPrefix?.() ?? '', '').replace(
      /^\/+|\/+$/g,
      '',
    );
    const endpoint = `${prefix ? `/${prefix}` : ''}${this.options.path === '/' ? '' : this.options.path}`;
    const normalized = endpoint.toLowerCase() || '/';
    return { endpoint: normalized, tools: `${normalized === '/' ? '' : normalized}/tools` };
  }

  protected listensOnLoopback(req: IncomingMessage): boolean {
    if (this.loopbackServer !== undefined) return this.loopbackServer;
    const address = safely(() => this.environment.listeningAddress?.(), undefined);
    if (address && typeof address === 'object') {
      this.loopbackServer = isLoopbackAddress(address.address);
      return this.loopbackServer;
    }
    if (typeof address === 'string') {
      // A Unix socket or pipe sits behind a proxy that forwards the public Host: no check.
      this.loopbackServer = false;
      return false;
    }
    return isLoopbackAddress(req.socket?.localAddress);
  }
}

/**
 * Drops headers whose original name contains `_`: a proxy that folds `X_MCP_API_Key` onto
 * `X-MCP-API-Key` would otherwise let a client overwrite a header the proxy set.
 */
function stripUnderscoreHeaders(req: IncomingMessage): void {
  for (const name of underscoreHeaderNames(req.rawHeaders ?? [])) delete req.headers[name];
}

function safely<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
