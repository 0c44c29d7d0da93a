import { PARSE_AGENT_VERSION } from '../version';
import type { McpServerInfo } from './mcp-dispatcher.types';

/** The MCP revision this server prefers; answered when a client asks for one we do not speak. */
export const PROTOCOL_VERSION = '2025-06-18';

/**
 * Revisions we negotiate. Their differences that touch this server are additive (progress
 * `message`, `outputSchema`/`structuredContent`, descriptor `_meta`), so one dispatcher serves all.
 */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
]);

/** Echoes a supported requested revision; anything else (absent, unknown, not a string) gets ours. */
export function negotiateProtocolVersion(requested: unknown): string {
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
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
