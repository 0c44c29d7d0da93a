import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TransportLogger } from '../../transport/shared/transport-logger';
import { MCP_GATE_STATE } from '../../transport/http/mcp-http.constants';
import type { McpRequest } from '../../transport/http/mcp-request';
import type { McpRequestGate } from '../../transport/http/mcp-request-gate';

/**
 * The endpoint on Nest's two HTTP platforms. The handler works on Node's request and response:
 * Express hands them over as they are; under Fastify they are `request.raw` and `reply.raw`, and
 * the reply is hijacked so Fastify leaves the response to the endpoint. Only the shapes used here
 * are declared, so the library needs neither platform's types.
 */
interface FastifyReplyLike {
  raw: ServerResponse;
  hijack(): unknown;
}

interface FastifyRequestLike {
  raw: IncomingMessage;
  /** The client address, with Fastify's `trustProxy` applied. */
  ip?: string;
  /** No route of the app matched the request (Fastify routes before onRequest hooks run). */
  is404?: boolean;
}

interface FastifyInstanceLike {
  addHook(
    name: 'onRequest',
    hook: (
      request: FastifyRequestLike,
      reply: FastifyReplyLike,
      done: (error?: unknown) => void,
    ) => void,
  ): unknown;
  addContentTypeParser(
    type: string,
    parser: (
      request: FastifyRequestLike,
      payload: unknown,
      done: (error: Error | null, body?: unknown) => void,
    ) => void,
  ): unknown;
}

/** What the controller hands the handler: Node's request and response, and the host's request. */
export interface NodeExchange {
  req: McpRequest;
  res: ServerResponse;
  /** The request object the host's guards saw (Fastify's request): agentFactory receives it. */
  hostRequest: McpRequest;
}

/** Node's request and response of an exchange on either platform (a Fastify reply is hijacked). */
export function nodeExchange(request: unknown, response: unknown): NodeExchange {
  if (isFastifyReply(response)) {
    response.hijack();
    return {
      req: (request as FastifyRequestLike).raw as McpRequest,
      res: response.raw,
      hostRequest: request as McpRequest,
    };
  }
  return {
    req: request as McpRequest,
    res: response as ServerResponse,
    hostRequest: request as McpRequest,
  };
}

/** Node's response on either platform (a Fastify reply is hijacked: the caller writes it). */
export function nodeResponse(response: unknown): ServerResponse {
  if (!isFastifyReply(response)) return response as ServerResponse;
  response.hijack();
  return response.raw;
}

/** Node's request on either platform. */
export function nodeRequest(request: unknown): IncomingMessage {
  const raw = (request as Partial<FastifyRequestLike>)?.raw;
  return raw && typeof raw === 'object' ? raw : (request as IncomingMessage);
}

interface HttpAdapterLike {
  getType?(): string;
  use?(...handlers: unknown[]): unknown;
  getInstance?(): unknown;
}

/**
 * Installs the transport gate ahead of the platform's body parsing, the host's middleware and
 * every guard: Express middleware, or a Fastify onRequest hook. On another platform the checks
 * run in the controller, after guards and body parsing (said once in the log).
 */
export function installMcpGate(
  adapter: HttpAdapterLike | undefined,
  gate: McpRequestGate,
  logger: TransportLogger,
): void {
  const type = adapter?.getType?.();
  if (type === 'express' && adapter?.use) {
    const app = adapter.getInstance?.() as ExpressAppLike | undefined;
    adapter.use((req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) =>
      gate.screen(req, res, next, undefined, () => expressRouteMatches(app, req)),
    );
    return;
  }
  if (type === 'fastify' && adapter?.getInstance) {
    installOnFastify(adapter.getInstance() as FastifyInstanceLike, gate);
    return;
  }
  logger.warn(
    'The MCP transport gate supports the Express and Fastify adapters only; on this adapter its checks run in the controller, after guards and body parsing.',
  );
}

/**
 * The body of an MCP request is read by the gate (size cap before anything is buffered, exact
 * JSON-RPC errors), never by Fastify's parser: once the gate accepted it, the request is marked
 * with this content type, whose parser hands Fastify the body the gate parsed (or nothing, for a
 * body that waits for the guards) and puts the client's content type back.
 */
const GATED_CONTENT_TYPE = 'application/x.parse-agent-mcp-gated';
const HELD_CONTENT_TYPE = Symbol('parse-agent:held-content-type');

type GatedRequest = McpRequest & { [HELD_CONTENT_TYPE]?: string | undefined };

/** The parts of an Express app's router read to tell whether the host has a route. */
interface ExpressLayerLike {
  route?: { _handlesMethod?(method: string): boolean };
  match?(path: string): boolean;
}
interface ExpressAppLike {
  router?: { stack?: ExpressLayerLike[] };
  _router?: { stack?: ExpressLayerLike[] };
}

/**
 * Whether a route the host registered on the Express app serves this request (asked only for a
 * path under the endpoint that the endpoint does not serve). Unreadable router: assume it does,
 * so the platform answers as before rather than the gate hiding a host route.
 */
function expressRouteMatches(app: ExpressAppLike | undefined, req: IncomingMessage): boolean {
  try {
    const stack = app?.router?.stack ?? app?._router?.stack;
    if (!Array.isArray(stack)) return true;
    const path = (req.url ?? '/').split('?')[0];
    const method = req.method ?? 'GET';
    return stack.some(
      (layer) =>
        layer.route !== undefined &&
        typeof layer.match === 'function' &&
        layer.match(path) &&
        (layer.route._handlesMethod?.(method) ?? true),
    );
  } catch {
    return true;
  }
}

function installOnFastify(instance: FastifyInstanceLike, gate: McpRequestGate): void {
  instance.addContentTypeParser(GATED_CONTENT_TYPE, (request, _payload, done) => {
    const raw = request.raw as GatedRequest;
    const state = raw[MCP_GATE_STATE];
    // A deferred body's content type comes back when the gate reads the rest (completeBody).
    if (state?.deferred) delete raw.headers['content-type'];
    else raw.headers['content-type'] = raw[HELD_CONTENT_TYPE];
    done(null, state?.body);
  });
  instance.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw as GatedRequest;
    // The pre-auth rate limit is keyed by address: the one Fastify derived (trustProxy), as
    // Express's req.ip is.
    raw.ip ??= request.ip;
    gate.screen(
      raw,
      reply.raw,
      (error) => {
        if (error) return done(error);
        const state = raw[MCP_GATE_STATE];
        if (state && (state.body !== undefined || state.deferred)) {
          raw[HELD_CONTENT_TYPE] = raw.headers['content-type'];
          raw.headers['content-type'] = GATED_CONTENT_TYPE;
        }
        done();
      },
      () => {
        // The gate answered (a refusal): Fastify must not send a response of its own.
        reply.hijack();
        done();
      },
      () => request.is404 !== true,
    );
  });
}

function isFastifyReply(response: unknown): response is FastifyReplyLike {
  return (
    typeof response === 'object' &&
    response !== null &&
    typeof (response as Partial<FastifyReplyLike>).hijack === 'function' &&
    typeof (response as Partial<FastifyReplyLike>).raw === 'object'
  );
}
