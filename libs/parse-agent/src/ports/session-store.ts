import type { Observable } from 'rxjs';

/** One Streamable HTTP session: issued on initialize, bound to the principal that opened it. */
export interface McpSession {
  readonly id: string;
  /** Fingerprint of the principal; another principal cannot use the id. */
  readonly owner: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** Completes when the session ends (DELETE, idle expiry, shutdown): its streams close. */
  readonly ended$: Observable<void>;
}

/**
 * Where MCP sessions live. The in-memory default serves one process; a shared store (Redis) lets a
 * session opened on one node be used on every node. Methods may be sync or async.
 */
export interface SessionStore {
  create(owner: string): McpSession | Promise<McpSession>;
  /** The live session with this id owned by `owner` (refreshing its idle clock), else undefined. */
  get(id: string, owner: string): McpSession | undefined | Promise<McpSession | undefined>;
  /** Ends the session everywhere; false when there was none. */
  delete(id: string): boolean | Promise<boolean>;
  /** Ends every session this store knows (application shutdown). */
  clear(): void | Promise<void>;
}

/** Injection token for the SessionStore (override to share sessions between nodes). */
export const SessionStore = Symbol('SessionStore');
