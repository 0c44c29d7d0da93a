/** Names and defaults of the MCP HTTP transport (not exported from the package). */

/** Where the request gate leaves its verdict on the request for the controller. */
export const MCP_GATE_STATE = Symbol('parse-agent:mcp-gate-state');

export const DEFAULT_MCP_PATH = '/mcp';
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 2000;
/** Body read before the host's guards have accepted the request (see `preAuthMaxBodyBytes`). */
export const DEFAULT_PRE_AUTH_MAX_BODY_BYTES = 65_536;
/** Open GET streams one principal may hold on one node; its oldest is closed for one more. */
export const DEFAULT_MAX_GET_STREAMS_PER_PRINCIPAL = 8;
/** Open sessions one user may hold (all of its tokens together); one more is refused. */
export const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL = 32;
/** `initialize` requests one user may send per window. */
export const DEFAULT_INITIALIZE_LIMIT = 30;
export const DEFAULT_INITIALIZE_WINDOW_SECONDS = 60;
export const DEFAULT_SHUTDOWN_GRACE_PERIOD_MS = 10_000;
/** The first revision whose clients accept an SSE event without data (the priming event). */
export const PRIMING_PROTOCOL_VERSION = '2025-11-25';
/** After the grace period, how long cancelled calls get to answer on their own. */
export const SHUTDOWN_SETTLE_MS = 1_000;

/**
 * After the drain, the endpoint keeps answering late calls (503, Connection: close) until none has
 * arrived for SHUTDOWN_LINGER_QUIET_MS, at most SHUTDOWN_LINGER_MAX_MS: a request a client sent on
 * a keep-alive connection just as the last call finished gets that answer, not a connection the
 * server closes under it. Then the listener closes and each connection ends after its answer.
 */
export const SHUTDOWN_LINGER_QUIET_MS = 150;
export const SHUTDOWN_LINGER_MAX_MS = 1_000;

/** Header names, lower-cased as Node exposes them. */
export const HEADER = Object.freeze({
  sessionId: 'mcp-session-id',
  protocolVersion: 'mcp-protocol-version',
  correlationId: 'x-mcp-session-id',
  apiKey: 'x-mcp-api-key',
  lastEventId: 'last-event-id',
  /** 2026-07-28: the body's method and (tools/call, prompts/get, resources/read) name or uri. */
  method: 'mcp-method',
  name: 'mcp-name',
});

/** Header names as they go out on responses. */
export const RESPONSE_HEADER = Object.freeze({
  sessionId: 'Mcp-Session-Id',
});

export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
});

/** Log context of the endpoint (Nest Logger). */
export const MCP_LOG_CONTEXT = 'ParseAgentMcp';
