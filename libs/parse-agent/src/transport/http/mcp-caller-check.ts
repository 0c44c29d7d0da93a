import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import { sendJsonRpcError } from './mcp-http-response';
import {
  hasRequiredHeader,
  isHostAllowedOnLoopback,
  isLoopbackAddress,
  isOriginAllowed,
  underscoreHeaderNames,
} from './transport-checks';
import type { TransportLogger } from '../shared/transport-logger';

/** What the gate learns from the app it is mounted in, read lazily (the app may not listen yet). */
export interface McpGateEnvironment {
  /** The app's global prefix, read when the first request arrives. */
  globalPrefix?: () => string;
  /** Address the HTTP server listens on. */
  listeningAddress?: () => AddressInfo | string | null | undefined;
}

/**
 * The gate's caller half: which of the endpoint's paths a request is for (global prefix applied,
 * computed on the first request), and who may call at all (Host against DNS rebinding when the
 * server listens on loopback, Origin, the required custom header).
 */
export class McpCallerCheck {
  private endpointPaths?: { endpoint: string; tools: string };
  private loopbackServer?: boolean;

  constructor(
    private readonly options: ResolvedMcpEndpointOptions,
    private readonly logger: TransportLogger,
    private readonly environment: McpGateEnvironment,
  ) {}

  /**
   * `endpoint` for the MCP path, `tools` for its `/tools` listing, `beneath` for any other path
   * under the endpoint (none when the endpoint is `/`), undefined for the rest of the app.
   */
  routeOf(req: IncomingMessage): 'endpoint' | 'tools' | 'beneath' | undefined {
    const paths = (this.endpointPaths ??= this.resolvePaths());
    const path = (req.url ?? '').split('?')[0].replace(/\/+$/, '').toLowerCase() || '/';
    if (path === paths.endpoint) return 'endpoint';
    if (path === paths.tools) return 'tools';
    if (paths.endpoint !== '/' && path.startsWith(`${paths.endpoint}/`)) return 'beneath';
    return undefined;
  }

  /** The endpoint's path as requests reach it (global prefix applied). */
  endpointPath(): string {
    return (this.endpointPaths ??= this.resolvePaths()).endpoint;
  }

  /** Host (DNS rebinding), Origin and the required custom header; answers a refusal itself. */
  check(req: IncomingMessage, res: ServerResponse): boolean {
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

  private resolvePaths(): { endpoint: string; tools: string } {
    const prefix = safely(() => this.environment.globalPrefix?.() ?? '', '').replace(
      /^\/+|\/+$/g,
      '',
    );
    const endpoint = `${prefix ? `/${prefix}` : ''}${this.options.path === '/' ? '' : this.options.path}`;
    const normalized = endpoint.toLowerCase() || '/';
    return { endpoint: normalized, tools: `${normalized === '/' ? '' : normalized}/tools` };
  }

  private listensOnLoopback(req: IncomingMessage): boolean {
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
export function stripUnderscoreHeaders(req: IncomingMessage): void {
  for (const name of underscoreHeaderNames(req.rawHeaders ?? [])) delete req.headers[name];
}

function safely<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
