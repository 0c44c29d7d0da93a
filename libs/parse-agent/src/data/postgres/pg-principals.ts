import type { AgentIdentity } from '../../core/agent-identity';
import { AgentUnauthorizedError, ParseRequestError } from '../../core/errors';
import type { ParseRestClient } from '../parse-rest/parse-rest-client';
import type { PgReader } from './class-level-permissions';
import { isUndefinedTableError, rolePrincipalsQuery, userRolesQuery } from './role-principals-sql';
import { translate } from './pg-read-transaction';
import type { SqlQuery } from './sql-params';
import { printClassAs } from '../../core/secret-display';

export interface PgPrincipalOptions {
  /** How long a session token's user is remembered (ms, default 10 000). */
  sessionTtlMs?: number;
  /** How long role expansions are remembered (ms, default 30 000). */
  roleTtlMs?: number;
  /** Time limit for the `/users/me` call (ms, default 5 000). */
  sessionLookupTimeoutMs?: number;
  now?: () => number;
}

interface Cached<T> {
  at: number;
  value: Promise<T>;
}

/** Parse's answer for a session that is unknown or expired. */
const INVALID_SESSION_TOKEN = 209;

/**
 * Who an identity reads as on the direct PostgreSQL path: a session token's user (asked once of
 * Parse Server's `/users/me`, remembered briefly), an aclUser or an aclRole, each with its roles
 * expanded through inheritance (remembered with a TTL; `invalidate()` forgets everything, e.g.
 * after a role change).
 */
export class PgPrincipalResolver {
  protected readonly sessions = new Map<string, Cached<string>>();
  protected readonly roles = new Map<string, Cached<string[]>>();

  constructor(
    protected readonly run: (query: SqlQuery) => Promise<Record<string, unknown>[]>,
    protected readonly parse: ParseRestClient | undefined,
    protected readonly options: PgPrincipalOptions = {},
  ) {}

  protected now(): number {
    return (this.options.now ?? Date.now)();
  }

  async readerFor(identity: AgentIdentity, signal?: AbortSignal): Promise<PgReader> {
    if (identity.sessionToken) {
      const userId = await this.userForSession(identity.sessionToken, signal);
      return { master: false, userId, roles: await this.userRoles(userId) };
    }
    if (identity.aclUser) {
      return {
        master: false,
        userId: identity.aclUser,
        roles: await this.userRoles(identity.aclUser),
      };
    }
    if (identity.aclRole) return { master: false, roles: await this.roleScope(identity.aclRole) };
    if (identity.usingMasterKey || identity.authType === 'master_key') {
      return { master: true, roles: [] };
    }
    return { master: false, roles: [] };
  }

  invalidate(): void {
    this.sessions.clear();
    this.roles.clear();
  }

  /** Forgets what is cached for one identity: its session's user, its user's or role's roles. */
  async forget(identity: AgentIdentity): Promise<void> {
    if (identity.aclUser) this.roles.delete(`user:${identity.aclUser}`);
    if (identity.aclRole) this.roles.delete(`role:${identity.aclRole}`);
    if (identity.sessionToken) {
      const hit = this.sessions.get(identity.sessionToken);
      this.sessions.delete(identity.sessionToken);
      const userId = await hit?.value.catch(() => undefined);
      if (userId) this.roles.delete(`user:${userId}`);
    }
  }

  protected remember<T>(
    map: Map<string, Cached<T>>,
    key: string,
    ttl: number,
    load: () => Promise<T>,
  ): Promise<T> {
    const hit = map.get(key);
    if (hit && this.now() - hit.at < ttl) return hit.value;
    const value = load();
    map.set(key, { at: this.now(), value });
    // A failed lookup is not remembered: the next call asks again.
    value.catch(() => {
      if (map.get(key)?.value === value) map.delete(key);
    });
    if (map.size > 10_000) map.delete(map.keys().next().value as string);
    return value;
  }

  protected userForSession(token: string, signal?: AbortSignal): Promise<string> {
    return this.remember(this.sessions, token, this.options.sessionTtlMs ?? 10_000, async () => {
      if (!this.parse) {
        throw new AgentUnauthorizedError('Session tokens need the Parse REST client.');
      }
      const timeout = AbortSignal.timeout(this.options.sessionLookupTimeoutMs ?? 5_000);
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      try {
        const me = await this.parse.request<{ objectId?: unknown }>(
          'GET',
          '/users/me',
          undefined,
          { sessionToken: token },
          combined,
        );
        if (typeof me.objectId !== 'string') throw new AgentUnauthorizedError('Invalid session.');
        return me.objectId;
      } catch (error) {
        if (error instanceof ParseRequestError && error.parseCode === INVALID_SESSION_TOKEN) {
          throw new AgentUnauthorizedError('The session token is invalid or expired.', {
            reason: 'invalid_session',
          });
        }
        if (timeout.aborted && !signal?.aborted) {
          throw new ParseRequestError(
            'Parse error: resolving the session user timed out; Parse Server did not answer /users/me in time.',
          );
        }
        throw error;
      }
    });
  }

  protected userRoles(userId: string): Promise<string[]> {
    return this.remember(this.roles, `user:${userId}`, this.options.roleTtlMs ?? 30_000, () =>
      this.principalRows(userRolesQuery(userId)),
    );
  }

  protected roleScope(roleName: string): Promise<string[]> {
    return this.remember(
      this.roles,
      `role:${roleName}`,
      this.options.roleTtlMs ?? 30_000,
      async () => {
        const inherited = await this.principalRows(rolePrincipalsQuery(roleName));
        return [...new Set([`role:${roleName}`, ...inherited])];
      },
    );
  }

  /** Role rows as principals; no `_Join` table yet means no roles. */
  protected async principalRows(query: SqlQuery): Promise<string[]> {
    try {
      return (await this.run(query)).map((r) => String(r.principal));
    } catch (error) {
      if (isUndefinedTableError(error)) return [];
      throw translate(error, 0);
    }
  }
}

// Caches users by session token: printed by name only.
printClassAs(PgPrincipalResolver);
