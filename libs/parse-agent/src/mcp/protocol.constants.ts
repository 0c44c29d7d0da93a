import { PARSE_AGENT_VERSION } from '../version';
import type { McpServerInfo } from './mcp-dispatcher.types';

/** The MCP revision this server prefers; answered when a client asks for one we do not speak. */
export const PROTOCOL_VERSION = '2025-06-18';

/**
 * Revisions of the sessionless era (no `initialize`: each request carries its revision and the
 * client's capabilities in `params._meta`); served by `mcp/modern-revision.ts` around the dispatcher.
 */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = Object.freeze(['2026-07-28']);

/** Whether a revision belongs to the sessionless era (2026-07-28 and later). */
export function isModernProtocolVersion(version: unknown): version is string {
  return typeof version === 'string' && MODERN_PROTOCOL_VERSIONS.includes(version);
}

/**
 * Revisions we negotiate. Their differences that touch this server are additive (progress
 * `message`, `outputSchema`/`structuredContent`, descriptor `_meta`), so one dispatcher serves all;
 * the sessionless 2026-07-28 revision is adapted around it (see `MODERN_PROTOCOL_VERSIONS`).
 */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  '2026-07-28',
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
]);

/**
 * `initialize` negotiation: echoes a supported requested revision; anything else (absent, unknown,
 * not a string, or a sessionless-era revision, which has no `initialize`) gets ours.
 */
export function negotiateProtocolVersion(requested: unknown): string {
  return typeof requested === 'string' &&
    SUPPORTED_PROTOCOL_VERSIONS.includes(requested) &&
    !isModernProtocolVersion(requested)
    ? requested
    : PROTOCOL_VERSION;
}

/** JSON-RPC error codes this server uses (the standard ones plus two server-defined ones). */
export const JSON_RPC_ERROR_CODES = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Overload refusals from the transport (too many requests, server busy). */
  serverBusy: -32000,
  unauthorized: -32001,
  /** 2026-07-28: an HTTP header disagrees with the body (MCP-Protocol-Version, Mcp-Method). */
  headerMismatch: -32020,
  /** 2026-07-28: the request's revision is not served; `data.supported` lists those that are. */
  unsupportedProtocolVersion: -32022,
} as const);

export interface McpServerCapabilities {
  tools: { listChanged: boolean };
  resources: { subscribe: boolean; listChanged: boolean };
  prompts: { listChanged: boolean };
}

/**
 * What `initialize` advertises. Tool and prompt list changes are pushed on streaming connections;
 * the resource set only changes with a deploy, and nobody can subscribe to a resource.
 */
export const SERVER_CAPABILITIES: Readonly<McpServerCapabilities> = Object.freeze({
  tools: Object.freeze({ listChanged: true }),
  resources: Object.freeze({ subscribe: false, listChanged: false }),
  prompts: Object.freeze({ listChanged: true }),
});

/** A fresh, mutable copy of the capabilities for one response. */
export function serverCapabilities(): McpServerCapabilities {
  return {
    tools: { ...SERVER_CAPABILITIES.tools },
    resources: { ...SERVER_CAPABILITIES.resources },
    prompts: { ...SERVER_CAPABILITIES.prompts },
  };
}

export const DEFAULT_SERVER_INFO: Readonly<McpServerInfo> = Object.freeze({
  name: 'nestjs-parse-agent',
  version: PARSE_AGENT_VERSION,
});

/** `_meta` key carrying a failed tool call's `error_code` next to its text. */
export const ERROR_CODE_META_KEY = 'parse.error_code';

/** Reserved `_meta` keys of the 2026-07-28 per-request envelope and its results/notifications. */
export const MODERN_META_KEY = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const);
