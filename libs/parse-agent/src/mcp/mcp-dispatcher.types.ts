import type { McpIcon } from '../tools/tool-definition';
import type { ElicitationChannel } from '../ports/elicitation-channel';
import type { Observable } from 'rxjs';

/** JSON-RPC shapes the MCP dispatcher speaks, and what it hands to transports. */
export type JsonRpcId = string | number | null;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: JsonRpcError;
}

/** A request the server sends to the client (e.g. elicitation/create). */
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

/**
 * One item of a dispatch: zero or more notifications (e.g. notifications/progress) and then exactly
 * one terminal item, either a response (with the HTTP status the transport should use: 200, or 401
 * for Unauthorized, 503 when the rate limiter cannot count; `headers` to add, e.g. Retry-After) or `accepted` (the body was a notification or a client response: HTTP 202, no body).
 */
export type DispatchMessage =
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; status: number; message: JsonRpcResponse; headers?: Record<string, string> }
  | { kind: 'accepted' };

export interface DispatchLogger {
  error(message: string, error?: unknown): void;
  warn?(message: string): void;
}

/** The session a resource subscription belongs to: its id, and when it ends (DELETE, expiry, shutdown). */
export interface SubscribingSession {
  readonly id: string;
  readonly ended$: Observable<void>;
}

export interface DispatchContext {
  /** Aborts the in-flight call (notifications/cancelled, client disconnect). */
  signal?: AbortSignal;
  /**
   * The caller aborts `signal` itself before it unsubscribes early (the HTTP transports do): the
   * dispatcher then runs the call under `signal` as it is instead of linking a signal of its own
   * to it, one AbortController and listener less per call.
   */
  ownsSignal?: boolean;
  /** Unexpected errors are logged here; the wire only ever says "Internal error". */
  logger?: DispatchLogger;
  /** Lets tools ask the human (MCP elicitation); absent when the client cannot answer. */
  elicitation?: ElicitationChannel;
  /** The request's session (Streamable HTTP): resource subscriptions belong to it. */
  session?: SubscribingSession;
}

export interface McpServerInfo {
  name: string;
  version: string;
  /** The optional fields of MCP 2025-11-25's `Implementation`, passed on when set. */
  title?: string;
  description?: string;
  websiteUrl?: string;
  icons?: McpIcon[];
}
