import type { IncomingMessage } from 'node:http';
import { ParseAgentConfigError } from '../../core/errors';
import { DEFAULT_CALL_LEASE_MS, type EventStore } from '../../ports/event-store';
import { DEFAULT_EVENT_RETENTION_MS } from '../../ports/in-memory-event-store';
import type { ParseAgent } from '../../agent/parse-agent';
import type { RateLimiter } from '../../ports/rate-limiter';
import {
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_INITIALIZE_LIMIT,
  DEFAULT_INITIALIZE_WINDOW_SECONDS,
  DEFAULT_MAX_GET_STREAMS_PER_PRINCIPAL,
  DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
  DEFAULT_MCP_PATH,
  DEFAULT_PRE_AUTH_MAX_BODY_BYTES,
  DEFAULT_SHUTDOWN_GRACE_PERIOD_MS,
} from './mcp-http.constants';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_JSON_DEPTH,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
} from '../shared/transport-limits';
import { normalizeAllowedOrigins, normalizeRequiredHeader } from './transport-checks';

/**
 * Streaming tool calls in flight per process unless `maxConcurrentStreams` says otherwise: finite,
 * so slow or hostile clients cannot hold an unbounded number open, and far above what one node
 * serves in normal use.
 */
export const DEFAULT_MAX_CONCURRENT_STREAMS = 1_000;

/**
 * The `mcp` extra of `ParseAgentModule.forRoot({ parse, agentFactory, mcp })`: where the endpoint is mounted and
 * which transport limits it enforces. Synchronous because it shapes the module (route, guards).
 */
export interface McpEndpointOptions<TGuard = unknown> {
  /** Route of the endpoint (default `/mcp`); the tool listing is served at `<path>/tools`. */
  path?: string;
  /** Host guards (classes or instances) that run before `agentFactory`, after the transport checks. */
  guards?: TGuard[];
  /** Answer `Accept: text/event-stream` requests with SSE and serve the GET stream (default true). */
  streaming?: boolean;
  /** How often a streaming call reports that it is still running (default 2000 ms). */
  heartbeatIntervalMs?: number;
  /** Largest accepted request body (default 1 MiB; exactly this many bytes pass). */
  maxBodyBytes?: number;
  /**
   * Largest body read before the host's guards have accepted the request (default 64 KiB, at most
   * `maxBodyBytes`). A larger body is answered 413 at once when `preAuthenticate` says the request
   * carries no credentials; otherwise it waits unread until the guards and `agentFactory` accept
   * the caller (guards then see `request.body` undefined), and a refusal never reads it.
   */
  preAuthMaxBodyBytes?: number;
  /**
   * A cheap look at the headers, before any body is read: does the request carry credentials your
   * guards will check? It grants nothing; it only decides whether a body over
   * `preAuthMaxBodyBytes` may wait for the guards (true) or is refused with 413 at once (false).
   * Default: an `Authorization`, `Cookie` or `X-MCP-API-Key` header is present.
   */
  preAuthenticate?: (request: IncomingMessage) => boolean | Promise<boolean>;
  /** Deepest accepted JSON nesting (default 20; the top-level object counts as 1). */
  maxJsonDepth?: number;
  /**
   * Browser origins allowed to call the endpoint: `https://app.example.com` (exact) or
   * `.example.com` (the domain and its subdomains). Requests without an Origin always pass.
   */
  allowedOrigins?: string[];
  /** A header every request must carry (`'X-MCP-Client'`) or carry with a value (`{ 'X-MCP-Client': 'v1' }`). */
  requireCustomHeader?: string | Record<string, string>;
  /** Checked before anything else (key `mcp:<client ip>`); a refusal answers 429. */
  preAuthRateLimiter?: RateLimiter;
  /**
   * Cap on streaming tool calls in flight in this process (default 1 000); above it POST answers
   * 503 "server busy".
   */
  maxConcurrentStreams?: number;
  /**
   * Open GET streams (server notifications) per principal in this process (default 8); opening one
   * more closes that principal's oldest, never another caller's. With Redis sessions the cap is
   * still per node.
   */
  maxGetStreamsPerPrincipal?: number;
  /**
   * Extra Host names accepted while the server listens on a loopback address (DNS-rebinding guard),
   * e.g. a local tunnel's name. localhost, 127.0.0.1 and [::1] are always accepted.
   */
  allowedHosts?: string[];
  /**
   * Issue `Mcp-Session-Id` on initialize and honour it (default true). Sessions live in this process
   * unless the module has the `redis` option (then every node shares them); behind a load balancer
   * with neither Redis nor sticky sessions, set false (clients then run stateless).
   */
  sessions?: boolean;
  /** Idle time after which a session is forgotten (default 30 minutes). */
  sessionIdleTimeoutMs?: number;
  /**
   * Open sessions per user (default 32), counted across all of that user's tokens (see `userKey`).
   * Past it `initialize` is refused with 429 until the user ends a session (DELETE) or one expires;
   * no open session is ended to make room, the user's own included.
   */
  maxSessionsPerPrincipal?: number;
  /**
   * Open sessions in total (default 10 000; with Redis sessions, all nodes together). Past it
   * `initialize` is refused with 503 until sessions end or expire; none is ended to make room.
   */
  maxSessions?: number;
  /**
   * `initialize` requests per user (see `userKey`), default 30 per 60 s; over it 429 with
   * Retry-After. Counted across nodes with the module's `redis` option. `false` turns it off.
   */
  initializeRateLimit?: { limit: number; windowSeconds: number } | false;
  /**
   * Whom a request acts for, as a stable string (a user id, an account), when your guards already
   * know it: sessions are counted and `initialize` is rate-limited per key. Return undefined to use
   * the default: the Parse user of a session-token agent (asked of Parse Server's `/users/me` once
   * per token, then cached), the aclUser or aclRole, or one shared key for master-key agents.
   * Called on every request: a session (its streams and cancellations too) belongs to the agent's
   * credentials and this key together, so a request with another key that names it gets 404 (two
   * operators acting with the master key stay apart).
   */
  userKey?: (
    request: IncomingMessage,
    agent: ParseAgent,
  ) => string | undefined | Promise<string | undefined>;
  /**
   * On application shutdown, how long calls in flight may run on (default 10 000 ms; 0 cancels at
   * once). New calls are refused with 503 meanwhile; calls still running afterwards are cancelled
   * through their AbortSignal and answered with a JSON-RPC error, and open streams are closed.
   */
  shutdownGracePeriodMs?: number;
  /**
   * Resumable streams (default false): streaming calls give every SSE event an id and keep the
   * events for `eventRetentionMs`, so a client that lost its connection reconnects (GET with
   * `Last-Event-ID`) and gets what it missed, then the rest, exactly once. A lost connection then
   * no longer cancels the call (`notifications/cancelled` still does). Events are kept in Redis with
   * the module's `redis` option (resume on any node), in this process otherwise; pass an
   * `EventStore` of your own (the MCP SDK's contract) instead of `true` to keep them elsewhere.
   */
  resumable?: boolean | EventStore;
  /** How long a resumable stream's events are kept after its last one (default 5 minutes). */
  eventRetentionMs?: number;
  /**
   * With Redis: how long a streaming call's lease outlives the last sign of life of the node
   * running it (default 10 s). A client resuming on another node after its node stopped gets a
   * JSON-RPC error answer within about this time instead of waiting for an answer that never comes.
   */
  callLeaseMs?: number;
}

/** The endpoint settings with defaults applied and inputs normalised. */
export interface ResolvedMcpEndpointOptions<TGuard = unknown> {
  path: string;
  guards: TGuard[];
  streaming: boolean;
  heartbeatIntervalMs: number;
  maxBodyBytes: number;
  preAuthMaxBodyBytes: number;
  preAuthenticate: (request: IncomingMessage) => boolean | Promise<boolean>;
  maxJsonDepth: number;
  allowedOrigins?: string[];
  requiredHeader?: { name: string; value?: string };
  preAuthRateLimiter?: RateLimiter;
  maxConcurrentStreams: number;
  maxGetStreamsPerPrincipal: number;
  allowedHosts: string[];
  sessions: boolean;
  sessionIdleTimeoutMs: number;
  maxSessions: number;
  maxSessionsPerPrincipal: number;
  initializeRateLimit: { limit: number; windowSeconds: number } | false;
  userKey?: (
    request: IncomingMessage,
    agent: ParseAgent,
  ) => string | undefined | Promise<string | undefined>;
  shutdownGracePeriodMs: number;
  /** Off, on with the module's store, or on with the application's store. */
  resumable: boolean | EventStore;
  eventRetentionMs: number;
  callLeaseMs: number;
}

/** Refuses a setting of the `mcp` extra; the message names it and says what it takes. */
function failSetting(problem: string): never {
  throw new ParseAgentConfigError(`ParseAgentModule.forRoot extras.mcp: ${problem}`);
}

/** A positive number setting, or `fallback` when unset. */
function positive(
  name: keyof McpEndpointOptions,
  value: unknown,
  fallback?: number,
): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    failSetting(`${name} must be a positive number (got ${JSON.stringify(value)}).`);
  }
  return value as number;
}

/**
 * Validates the `mcp` extra and fills in defaults; errors name the setting to fix. The steps run
 * in a fixed order, so a configuration with several faults is always refused for the same one.
 */
export function resolveMcpEndpointOptions<TGuard>(
  options: McpEndpointOptions<TGuard>,
): ResolvedMcpEndpointOptions<TGuard> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    return failSetting('expected an object such as { path: "/mcp", guards: [AuthGuard] }.');
  }
  const { path, guards } = resolveRoute(options);
  const limits = resolveRequestLimits(options);
  const gates = resolveRequestGates(options);
  const resumable = resolveResumable(options);
  const initializeRateLimit = resolveInitializeRateLimit(options);
  if (options.userKey !== undefined && typeof options.userKey !== 'function') {
    failSetting('userKey must be a function (request, agent) => string | undefined.');
  }
  let requiredHeader: ResolvedMcpEndpointOptions['requiredHeader'];
  try {
    requiredHeader = normalizeRequiredHeader(options.requireCustomHeader);
  } catch (error) {
    failSetting((error as Error).message);
  }
  const sessionLimits = resolveSessionLimits(options);
  return {
    path: path.length > 1 ? path.replace(/\/+$/, '') : path,
    guards,
    streaming: options.streaming ?? true,
    heartbeatIntervalMs: limits.heartbeatIntervalMs,
    maxBodyBytes: limits.maxBodyBytes,
    preAuthMaxBodyBytes: limits.preAuthMaxBodyBytes,
    preAuthenticate: limits.preAuthenticate,
    maxJsonDepth: limits.maxJsonDepth,
    allowedOrigins: normalizeAllowedOrigins(options.allowedOrigins),
    requiredHeader,
    preAuthRateLimiter: gates.preAuthRateLimiter,
    maxConcurrentStreams: limits.maxConcurrentStreams,
    maxGetStreamsPerPrincipal: sessionLimits.maxGetStreamsPerPrincipal,
    allowedHosts: gates.allowedHosts,
    sessions: options.sessions ?? true,
    sessionIdleTimeoutMs: limits.sessionIdleTimeoutMs,
    maxSessions: sessionLimits.maxSessions,
    maxSessionsPerPrincipal: sessionLimits.maxSessionsPerPrincipal,
    initializeRateLimit,
    userKey: options.userKey,
    shutdownGracePeriodMs: limits.shutdownGracePeriodMs,
    resumable,
    eventRetentionMs: positive(
      'eventRetentionMs',
      options.eventRetentionMs,
      DEFAULT_EVENT_RETENTION_MS,
    )!,
    callLeaseMs: positive('callLeaseMs', options.callLeaseMs, DEFAULT_CALL_LEASE_MS)!,
  };
}

/** The route and the guards in front of it. */
function resolveRoute<TGuard>(options: McpEndpointOptions<TGuard>): {
  path: string;
  guards: TGuard[];
} {
  const path = options.path ?? DEFAULT_MCP_PATH;
  if (typeof path !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(path) || path.includes('//')) {
    failSetting(`path must be a route such as "/mcp" (got ${JSON.stringify(path)}).`);
  }
  const guards = options.guards ?? [];
  if (
    !Array.isArray(guards) ||
    guards.some((g) => !g || !['function', 'object'].includes(typeof g))
  ) {
    failSetting('guards must be an array of CanActivate classes or instances.');
  }
  return { path, guards };
}

/** Heartbeat, body and depth caps, the pre-authentication check, streams and shutdown grace. */
function resolveRequestLimits(
  options: McpEndpointOptions<unknown>,
): Pick<
  ResolvedMcpEndpointOptions,
  | 'heartbeatIntervalMs'
  | 'maxBodyBytes'
  | 'preAuthMaxBodyBytes'
  | 'preAuthenticate'
  | 'maxJsonDepth'
  | 'maxConcurrentStreams'
  | 'sessionIdleTimeoutMs'
  | 'shutdownGracePeriodMs'
> {
  const heartbeatIntervalMs = positive(
    'heartbeatIntervalMs',
    options.heartbeatIntervalMs,
    DEFAULT_HEARTBEAT_INTERVAL_MS,
  )!;
  const maxBodyBytes = Math.floor(
    positive('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES)!,
  );
  const preAuthMaxBodyBytes = Math.floor(
    positive(
      'preAuthMaxBodyBytes',
      options.preAuthMaxBodyBytes,
      Math.min(DEFAULT_PRE_AUTH_MAX_BODY_BYTES, maxBodyBytes),
    )!,
  );
  if (preAuthMaxBodyBytes > maxBodyBytes) {
    failSetting(
      `preAuthMaxBodyBytes (${preAuthMaxBodyBytes}) must not exceed maxBodyBytes (${maxBodyBytes}); raise maxBodyBytes or lower preAuthMaxBodyBytes.`,
    );
  }
  const preAuthenticate = options.preAuthenticate ?? carriesCredentialHeader;
  if (typeof preAuthenticate !== 'function') {
    failSetting('preAuthenticate must be a function (request) => boolean.');
  }
  const maxJsonDepth = Math.floor(
    positive('maxJsonDepth', options.maxJsonDepth, DEFAULT_MAX_JSON_DEPTH)!,
  );
  const maxConcurrentStreams = Math.floor(
    positive('maxConcurrentStreams', options.maxConcurrentStreams, DEFAULT_MAX_CONCURRENT_STREAMS)!,
  );
  const sessionIdleTimeoutMs = positive(
    'sessionIdleTimeoutMs',
    options.sessionIdleTimeoutMs,
    DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  )!;
  const grace = options.shutdownGracePeriodMs ?? DEFAULT_SHUTDOWN_GRACE_PERIOD_MS;
  if (typeof grace !== 'number' || !Number.isFinite(grace) || grace < 0) {
    failSetting(
      `shutdownGracePeriodMs must be a number of milliseconds, 0 or more (got ${JSON.stringify(grace)}).`,
    );
  }
  return {
    heartbeatIntervalMs,
    maxBodyBytes,
    preAuthMaxBodyBytes,
    preAuthenticate,
    maxJsonDepth,
    maxConcurrentStreams,
    sessionIdleTimeoutMs,
    shutdownGracePeriodMs: grace,
  };
}

/** Who may reach the endpoint before authentication: origins, hosts, the pre-auth rate limiter. */
function resolveRequestGates(
  options: McpEndpointOptions<unknown>,
): Pick<ResolvedMcpEndpointOptions, 'allowedHosts' | 'preAuthRateLimiter'> {
  if (
    options.allowedOrigins !== undefined &&
    (!Array.isArray(options.allowedOrigins) ||
      options.allowedOrigins.some((o) => typeof o !== 'string'))
  ) {
    failSetting('allowedOrigins must be an array of origins such as "https://app.example.com".');
  }
  if (
    options.allowedHosts !== undefined &&
    (!Array.isArray(options.allowedHosts) ||
      options.allowedHosts.some((h) => typeof h !== 'string'))
  ) {
    failSetting('allowedHosts must be an array of host names.');
  }
  const limiter = options.preAuthRateLimiter;
  if (limiter !== undefined && typeof (limiter as { check?: unknown })?.check !== 'function') {
    failSetting('preAuthRateLimiter must have a check(key) method (a RateLimiter).');
  }
  return {
    allowedHosts: (options.allowedHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean),
    preAuthRateLimiter: limiter,
  };
}

/** Off, on with the module's store, or on with the application's EventStore. */
function resolveResumable(options: McpEndpointOptions<unknown>): boolean | EventStore {
  const resumable = options.resumable ?? false;
  if (
    typeof resumable !== 'boolean' &&
    (typeof resumable !== 'object' ||
      typeof (resumable as Partial<EventStore>).storeEvent !== 'function' ||
      typeof (resumable as Partial<EventStore>).replayEventsAfter !== 'function')
  ) {
    failSetting(
      'resumable must be true, false or an EventStore (storeEvent and replayEventsAfter methods).',
    );
  }
  return resumable;
}

/** The per-principal cap on `initialize` requests, or false. */
function resolveInitializeRateLimit(
  options: McpEndpointOptions<unknown>,
): ResolvedMcpEndpointOptions['initializeRateLimit'] {
  const initializeRateLimit = options.initializeRateLimit ?? {
    limit: DEFAULT_INITIALIZE_LIMIT,
    windowSeconds: DEFAULT_INITIALIZE_WINDOW_SECONDS,
  };
  if (
    initializeRateLimit !== false &&
    (typeof initializeRateLimit !== 'object' ||
      !Number.isInteger(initializeRateLimit.limit) ||
      initializeRateLimit.limit < 1 ||
      typeof initializeRateLimit.windowSeconds !== 'number' ||
      !(initializeRateLimit.windowSeconds > 0))
  ) {
    failSetting(
      `initializeRateLimit must be false or { limit: <positive integer>, windowSeconds: <positive number> } (got ${JSON.stringify(initializeRateLimit)}).`,
    );
  }
  return initializeRateLimit;
}

/** GET streams and sessions per principal, and sessions in all. */
function resolveSessionLimits(
  options: McpEndpointOptions<unknown>,
): Pick<
  ResolvedMcpEndpointOptions,
  'maxGetStreamsPerPrincipal' | 'maxSessions' | 'maxSessionsPerPrincipal'
> {
  return {
    maxGetStreamsPerPrincipal: Math.floor(
      positive(
        'maxGetStreamsPerPrincipal',
        options.maxGetStreamsPerPrincipal,
        DEFAULT_MAX_GET_STREAMS_PER_PRINCIPAL,
      )!,
    ),
    maxSessions: Math.floor(positive('maxSessions', options.maxSessions, DEFAULT_MAX_SESSIONS)!),
    maxSessionsPerPrincipal: Math.floor(
      positive(
        'maxSessionsPerPrincipal',
        options.maxSessionsPerPrincipal,
        DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
      )!,
    ),
  };
}

/** The default `preAuthenticate`: the request names credentials of a common kind. */
export function carriesCredentialHeader(request: IncomingMessage): boolean {
  const { headers } = request;
  return Boolean(headers.authorization || headers.cookie || headers['x-mcp-api-key']);
}
