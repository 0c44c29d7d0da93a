import type { IncomingMessage } from 'node:http';
import type { DeferredBody } from './bounded-read';
import type { McpBodyKind } from './json-rpc-shape';
import { MCP_GATE_STATE } from './mcp-http.constants';

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

/** The HTTP request as the endpoint sees it: Node's, plus what parsers and the gate leave on it. */
export type McpRequest = IncomingMessage & {
  body?: unknown;
  ip?: string;
  _body?: boolean;
  [MCP_GATE_STATE]?: McpGateState;
};
