import type { Readable, Writable } from 'node:stream';
import type { ParseAgent } from '../../agent/parse-agent';
import type { McpDispatcher } from '../../mcp/mcp-dispatcher';
import type { McpTransport } from '../shared/mcp-transport';
import { createTransportContext } from '../shared/transport-context';
import { StdioTransport } from './stdio.transport';

export interface McpStdioOptions {
  dispatcher: McpDispatcher;
  /** The one agent every message runs as (a stdio server has a single client). */
  agent: ParseAgent;
  /** Default process.stdin. */
  input?: Readable;
  /** Only JSON-RPC goes here, one message per line. Default process.stdout. */
  output?: Writable;
  /** Diagnostics; never written to `output`. Default: stderr. */
  log?: (line: string) => void;
  /** Longest accepted line in bytes (default 1 MiB, as the HTTP body cap). */
  maxLineBytes?: number;
  /** Deepest accepted JSON nesting (default 20, as over HTTP). */
  maxJsonDepth?: number;
}

export interface McpStdioSession extends McpTransport {
  /** Resolves when the input ended and every call in flight has answered. */
  readonly closed: Promise<void>;
  /** Stops reading, cancels calls in flight and resolves `closed`. */
  close(): Promise<void>;
}

/**
 * MCP over stdio in one call, for scripts and hosts without Nest: a `StdioTransport` for the given
 * agent, started at once on a context of its own around the dispatcher. See StdioTransport.
 */
export function serveMcpOverStdio(options: McpStdioOptions): McpStdioSession {
  const { dispatcher, ...stdio } = options;
  const transport = new StdioTransport(stdio);
  // A ready agent cannot be refused, so the start cannot fail.
  void transport.start(createTransportContext({ dispatcher }));
  return transport;
}
