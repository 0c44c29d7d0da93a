import type { Observable } from 'rxjs';
import { ParseAgentError } from '../core/errors';

/** One Streamable HTTP session: issued on initialize, bound to the principal that opened it. */
export interface McpSession {
  readonly id: string;
  /** Fingerprint of the principal (the credentials); another principal cannot use the id. */
  readonly owner: string;
  /**
   * Whom the session acts for (a Parse user, an ACL user or role, the operator), as an opaque key:
   * the per-user cap counts sessions by it, across all of that user's tokens. Defaults to `owner`.
   */
  readonly user?: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /**
   * The client declared at initialize that it answers elicitation (form) requests. Kept with the
   * session, so a call on any node of a shared store may ask.
   */
  readonly elicitation?: boolean;
  /** Completes when the session ends (DELETE, idle expiry, shutdown): its streams close. */
  readonly ended$: Observable<void>;
}

export interface SessionCreateOptions {
  /** The user key sessions are counted by (default: the owner). */
  user?: string;
  /** The client declared the elicitation capability (see McpSession.elicitation). */
  elicitation?: boolean;
}

/**
 * Where MCP sessions live. The in-memory default serves one process; a shared store (Redis) lets a
 * session opened on one node be used on every node. Methods may be sync or async.
 *
 * `create` never ends another session to make room: when the user's cap or the store's total cap
 * is reached it throws SessionLimitError and the newcomer is refused.
 */
export interface SessionStore {
  create(owner: string, options?: SessionCreateOptions): McpSession | Promise<McpSession>;
  /** The live session with this id owned by `owner` (refreshing its idle clock), else undefined. */
  get(id: string, owner: string): McpSession | undefined | Promise<McpSession | undefined>;
  /** Ends the session everywhere; false when there was none. */
  delete(id: string): boolean | Promise<boolean>;
  /** Ends every session this store knows (application shutdown). */
  clear(): void | Promise<void>;
}

/** Injection token for the SessionStore in use (replace it with the `sessionStore` option). */
export const SessionStore = Symbol('SessionStore');

/**
 * A new session was refused because a cap is reached: the user's own (`scope: 'user'`, HTTP 429)
 * or the store's total (`scope: 'server'`, HTTP 503). Nobody's open session was ended for it.
 * `retryAfter` (seconds) is when the oldest idle session in that scope expires at the latest.
 */
export class SessionLimitError extends ParseAgentError {
  readonly errorCode = 'session_limit';
  constructor(
    readonly scope: 'user' | 'server',
    readonly limit: number,
    readonly retryAfter: number,
  ) {
    super(
      scope === 'user'
        ? `Too many open MCP sessions for this user (limit ${limit}): end sessions you no longer use (DELETE with their Mcp-Session-Id) or reuse an open one; otherwise retry after ${retryAfter}s, when the least recently used one expires. Other users' sessions are never ended to make room.`
        : `The server holds its maximum of ${limit} open MCP sessions: retry after ${retryAfter}s, when idle sessions expire. Open sessions are never ended to make room.`,
    );
  }
}

/** Seconds until a session last used at `lastSeenAt` expires (at least 1). */
export function secondsUntilExpiry(lastSeenAt: number, idleTimeoutMs: number, now: number): number {
  return Math.max(1, Math.ceil((lastSeenAt + idleTimeoutMs - now) / 1000));
}
