import {
  Controller,
  Get,
  Inject,
  Logger,
  Module,
  Req,
  Res,
  type DynamicModule,
  type INestApplication,
  type LoggerService,
  type LogLevel,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom } from 'rxjs';
import { isPermissionLevel, type PermissionLevel } from '../../core/constants';
import { AgentUnauthorizedError, ParseAgentConfigError } from '../../core/errors';
import type { AgentOptions } from '../../agent/parse-agent';
import type { RateLimiter } from '../../ports/rate-limiter';
import { McpDispatcher } from '../../mcp/mcp-dispatcher';
import type { ModelClass } from '../../metadata/metadata.types';
import { ParseAgentFactory } from '../parse-agent.factory';
import { ParseAgentModule } from '../parse-agent.module';
import type {
  AgentDefaults,
  ParseAgentModuleOptions,
  ParseConnectionConfig,
} from '../../composition/parse-agent-options.interface';
import {
  databaseOptions,
  dataPathOptionsOf,
  type DatabaseSetting,
  type DataPathOptions,
} from '../../composition/data-paths';
import type { McpEndpointOptions } from './mcp-endpoint-options';
import { HEADER } from '../../transport/http/mcp-http.constants';
import { sendJson, sendJsonRpcError } from '../../transport/http/mcp-http-response';
import { isLoopbackAddress, isLoopbackOrigin } from '../../transport/http/transport-checks';

/**
 * The standalone server's options. The direct database path (analytics for users, aclUser/aclRole
 * reads) is `database: { kind, uri }`, or a built-in path's own option as `forRoot` takes it
 * (`postgres: { pool }`, `mongo: { client }`) for a pool or client the application holds.
 */
export interface StandaloneMcpServerOptions extends DataPathOptions {
  parse: ParseConnectionConfig;
  /**
   * The database Parse Server stores its data in, by connection string: `{ kind: 'postgres', uri }`
   * or `{ kind: 'mongo', uri }`. Sets `parse.database` when that is not given.
   */
  database?: DatabaseSetting;
  /** Interface to bind (default 127.0.0.1). Anything but loopback requires an API key. */
  host?: string;
  /** Port (default 3001; 0 picks a free one). */
  port?: number;
  /** Required in `X-MCP-API-Key` when set (default `process.env.MCP_API_KEY`; empty means unset). */
  apiKey?: string;
  /** Tier of the server's agent (default readonly). */
  permissions?: PermissionLevel;
  /** Act for this Parse session instead of the master key. */
  sessionToken?: string;
  models?: ModelClass[];
  hiddenClasses?: ParseAgentModuleOptions['hiddenClasses'];
  /** Classes no model declares: 'hidden' (default) or 'visible'. */
  unregisteredClasses?: ParseAgentModuleOptions['unregisteredClasses'];
  queryLimits?: ParseAgentModuleOptions['queryLimits'];
  defaults?: AgentDefaults;
  /** Shared by every request (default: 60 calls per 60 s in this process). */
  rateLimiter?: RateLimiter;
  preAuthRateLimiter?: RateLimiter;
  /**
   * Browser origins allowed to call (see the endpoint's `allowedOrigins`). Without an API key and
   * without this list, only loopback origins (`http://localhost:<any port>`, `127.0.0.1`, `[::1]`)
   * are: the server acts with its own credentials, so a page elsewhere gets 403.
   */
  allowedOrigins?: string[];
  requireCustomHeader?: string | Record<string, string>;
  /** Further endpoint settings (streaming, heartbeats, limits); the path is always /mcp. */
  mcp?: Omit<McpEndpointOptions, 'path' | 'guards'>;
  /** Silence the master-key banner (a standalone server acts with the master key by default). */
  suppressSecurityBanners?: boolean;
  /** Close the server on SIGINT / SIGTERM (default false). */
  handleSignals?: boolean;
  /** Nest logger or log levels (default warnings and errors). */
  logger?: LoggerService | LogLevel[] | false;
}

export interface StandaloneMcpServer {
  app: INestApplication;
  /** e.g. http://127.0.0.1:3001 (the MCP endpoint is `${url}/mcp`). */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
const STANDALONE_SETTINGS = Symbol('parse-agent:standalone-settings');

interface StandaloneSettings {
  apiKey?: string;
  agentOptions: AgentOptions;
}

/** Compares in constant time: both sides are hashed first, so lengths never differ. */
export function apiKeyMatches(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || !presented) return false;
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

function presentedKey(req: IncomingMessage): string | undefined {
  const value = req.headers[HEADER.apiKey];
  return Array.isArray(value) ? value[0] : value;
}

@Controller()
class StandaloneController {
  constructor(
    @Inject(STANDALONE_SETTINGS) protected readonly settings: StandaloneSettings,
    @Inject(ParseAgentFactory) protected readonly agents: ParseAgentFactory,
    @Inject(McpDispatcher) protected readonly dispatcher: McpDispatcher,
  ) {}

  @Get('health')
  health(): { status: string; mcp_enabled: boolean } {
    return { status: 'ok', mcp_enabled: true };
  }

  @Get('tools')
  async tools(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    const { apiKey } = this.settings;
    if (apiKey && !apiKeyMatches(presentedKey(req), apiKey)) {
      return sendJson(res, 401, { error: 'Unauthorized: invalid or missing API key' });
    }
    const agent = this.agents.create(this.settings.agentOptions);
    const items = await lastValueFrom(
      this.dispatcher.dispatch({ jsonrpc: '2.0', id: 0, method: 'tools/list' }, agent),
      { defaultValue: undefined },
    );
    const result =
      items?.kind === 'response' ? (items.message.result as { tools?: unknown }) : undefined;
    if (!Array.isArray(result?.tools)) return sendJsonRpcError(res, 500, -32603, 'Internal error');
    sendJson(res, 200, result.tools);
  }
}

@Module({})
class StandaloneMcpModule {
  static register(
    options: StandaloneMcpServerOptions,
    settings: StandaloneSettings,
  ): DynamicModule {
    const database = databaseOptions(options.database, 'startStandaloneMcpServer');
    return {
      module: StandaloneMcpModule,
      imports: [
        ParseAgentModule.forRoot({
          parse: { ...options.parse, database: options.parse.database ?? database.parseDatabase },
          ...dataPathOptionsOf(options),
          ...database.paths,
          models: options.models,
          hiddenClasses: options.hiddenClasses,
          unregisteredClasses: options.unregisteredClasses,
          queryLimits: options.queryLimits,
          defaults: options.defaults,
          rateLimiter: options.rateLimiter,
          suppressSecurityBanners: options.suppressSecurityBanners,
          agentFactory: (req) => {
            if (settings.apiKey && !apiKeyMatches(presentedKey(req), settings.apiKey)) {
              throw new AgentUnauthorizedError('invalid or missing API key', {
                reason: 'bad_api_key',
              });
            }
            return { ...settings.agentOptions };
          },
          mcp: {
            ...options.mcp,
            path: '/mcp',
            preAuthRateLimiter: options.preAuthRateLimiter ?? options.mcp?.preAuthRateLimiter,
            allowedOrigins: options.allowedOrigins ?? options.mcp?.allowedOrigins,
            requireCustomHeader: options.requireCustomHeader ?? options.mcp?.requireCustomHeader,
          },
        }),
      ],
      controllers: [StandaloneController],
      providers: [{ provide: STANDALONE_SETTINGS, useValue: settings }],
    };
  }
}

/**
 * The options the standalone server itself reads, checked before anything starts; the module
 * checks the rest (parse, mcp...) and its errors reject the start as well.
 */
function checkStandaloneOptions(options: StandaloneMcpServerOptions): void {
  const fail = (problem: string): never => {
    throw new ParseAgentConfigError(`startStandaloneMcpServer: ${problem}`);
  };
  if (typeof options !== 'object' || options === null) {
    fail('pass an options object, e.g. { parse: { serverURL, appId, masterKey } }.');
  }
  const { host, port, apiKey, permissions, sessionToken } = options;
  if (host !== undefined && (typeof host !== 'string' || !host.trim())) {
    fail(`host must be an interface address such as '127.0.0.1' (got ${JSON.stringify(host)}).`);
  }
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    fail(
      `port must be a whole number from 0 to 65535, 0 picking a free one (got ${JSON.stringify(port)}).`,
    );
  }
  if (apiKey !== undefined && typeof apiKey !== 'string') {
    fail('apiKey must be a string (clients send it in X-MCP-API-Key).');
  }
  if (permissions !== undefined && !isPermissionLevel(permissions)) {
    fail(`permissions must be readonly, write or admin (got ${JSON.stringify(permissions)}).`);
  }
  if (sessionToken !== undefined && (typeof sessionToken !== 'string' || !sessionToken)) {
    fail('sessionToken must be a non-empty Parse session token, or left out for the master key.');
  }
  // A database setting that names no built-in path fails here, naming `database`.
  databaseOptions(options.database, 'startStandaloneMcpServer');
  const kind = options.database?.kind;
  if (kind !== undefined && options[kind] !== undefined) {
    fail(`pass the database once: database: { kind: '${kind}', uri } or ${kind}, not both.`);
  }
}

/**
 * Runs the MCP endpoint as its own small server: `/mcp`, `/health` (no auth) and `/tools`.
 * Refuses to listen beyond loopback without an API key.
 */
export async function startStandaloneMcpServer(
  options: StandaloneMcpServerOptions,
): Promise<StandaloneMcpServer> {
  checkStandaloneOptions(options);
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 3001;
  const apiKey = options.apiKey || process.env.MCP_API_KEY || undefined;
  if (!apiKey && !LOOPBACK_HOSTS.has(host) && !isLoopbackAddress(host)) {
    throw new ParseAgentConfigError(
      `startStandaloneMcpServer: refusing to listen on ${JSON.stringify(host)} without an API key. Bind to 127.0.0.1, ::1 or localhost, or set an API key (the apiKey option or the MCP_API_KEY environment variable); clients then send it in X-MCP-API-Key.`,
    );
  }
  const permissions = options.permissions ?? 'readonly';
  const settings: StandaloneSettings = {
    apiKey,
    agentOptions: { permissions, sessionToken: options.sessionToken },
  };
  const logger = new Logger('ParseAgentMcpServer');
  // abortOnError false: a module that fails to start rejects this promise (Nest's default would
  // exit the process, leaving the caller nothing to catch).
  const app = await NestFactory.create(StandaloneMcpModule.register(options, settings), {
    logger: options.logger ?? ['log', 'warn', 'error'],
    abortOnError: false,
  });
  // Keyless, the server lends its own identity (the master key by default) to whoever reaches
  // the port: a web page in the operator's browser must not be one of them. The Host check
  // (DNS rebinding) stays as it is; this adds the Origin of the page that sent the request.
  const allowedOrigins = options.allowedOrigins ?? options.mcp?.allowedOrigins;
  if (!apiKey && !allowedOrigins?.length) {
    app.use((req: IncomingMessage, res: ServerResponse, next: () => void) => {
      const origin = String(req.headers.origin ?? '').trim();
      if (origin && !isLoopbackOrigin(origin)) {
        return sendJsonRpcError(
          res,
          403,
          -32700,
          'Origin not allowed: this server has no API key, so only pages on this machine may call it',
        );
      }
      next();
    });
  }
  let tools: string[];
  try {
    await app.listen(port, host);
    tools = app.get(ParseAgentFactory).create(settings.agentOptions).allowedTools();
  } catch (error) {
    // Nothing may keep running behind a rejected start.
    await app.close().catch(() => undefined);
    throw error;
  }
  const address = app.getHttpServer().address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;

  let closing: Promise<void> | undefined;
  const onSignal = () => void close();
  const close = () => {
    closing ??= (async () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await app.close();
    })();
    return closing;
  };
  if (options.handleSignals) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }

  logger.log(`MCP server listening on ${url}/mcp (permissions: ${permissions})`);
  logger.log(`Tools: ${tools.join(', ')}`);
  return { app, url, host: address.address, port: address.port, close };
}
