import { createHash } from 'node:crypto';
import { ParseAgentError, ParseRequestError } from '../core/errors';
import type { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import { tenantOfUser, type TenantBinding, type TenantSource } from './tenant-source';
import { printClassAs } from '../core/secret-display';

/** How session tokens are checked (`auth.session` in the module options). */
export interface SessionVerifierOptions {
  /**
   * How long an answer is remembered (default 10 000 ms): a token revoked by logout stops working
   * within this long; 0 asks Parse on every request.
   */
  cacheTtlMs?: number;
  /** How long the check may wait on Parse Server before answering 503 (default 5 000 ms). */
  timeoutMs?: number;
  /** Answers remembered at most (default 5 000; the oldest go first). */
  maxEntries?: number;
}

export const DEFAULT_SESSION_CACHE_TTL_MS = 10_000;
export const DEFAULT_SESSION_TIMEOUT_MS = 5_000;
export const DEFAULT_SESSION_CACHE_ENTRIES = 5_000;

/** A session token Parse Server accepted, with its user and their tenant. */
export interface VerifiedSession {
  userId: string;
  username: string;
  /** From the tenant source; without one, no tenant and the reason says so. */
  tenant: TenantBinding;
}

/**
 * Parse Server could not say whether the token is valid (down, slow, failing): the caller is
 * refused for now (503), never cached as refused.
 */
export class SessionCheckUnavailableError extends ParseAgentError {
  readonly errorCode = 'session_check_unavailable';
  readonly retryAfter = 5;
}

const NO_TENANT_SOURCE: TenantBinding = {
  reason:
    'No tenant source is configured: set auth.tenant in the ParseAgentModule options (e.g. { fromRole: "{tenant}-staff" }).',
};

/**
 * Checks Parse session tokens with `/users/me` under a timeout, finds the user's tenant from the
 * configured source, and remembers the answer briefly (keyed by a hash of the token, never the
 * token), so a burst of MCP messages does not cost a Parse round trip each. `fresh` skips the
 * cache: requests that may open an MCP session use it, so a logged-out token or a removed
 * membership cannot start a new session.
 */
export class ParseSessionVerifier {
  protected readonly cache = new Map<string, { at: number; session: VerifiedSession | null }>();
  protected readonly inFlight = new Map<string, Promise<VerifiedSession | null>>();
  protected readonly cacheTtlMs: number;
  protected readonly timeoutMs: number;
  protected readonly maxEntries: number;

  constructor(
    protected readonly parse: ParseRestClient,
    options: SessionVerifierOptions = {},
    protected readonly tenantSource?: TenantSource,
    protected readonly now: () => number = () => Date.now(),
  ) {
    this.cacheTtlMs = options.cacheTtlMs ?? DEFAULT_SESSION_CACHE_TTL_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
    this.maxEntries = options.maxEntries ?? DEFAULT_SESSION_CACHE_ENTRIES;
  }

  /**
   * The session's user, or null when Parse Server rejects the token. Throws
   * SessionCheckUnavailableError when Parse Server cannot answer in time.
   */
  async verify(
    sessionToken: string,
    options: { fresh?: boolean } = {},
  ): Promise<VerifiedSession | null> {
    const key = createHash('sha256').update(sessionToken).digest('hex');
    if (!options.fresh) {
      const hit = this.cache.get(key);
      if (hit && this.now() - hit.at < this.cacheTtlMs) return hit.session;
      // Concurrent first requests with one token share a single check.
      const pending = this.inFlight.get(key);
      if (pending) return pending;
    }
    const check = this.ask(sessionToken).then((session) => {
      this.remember(key, session);
      return session;
    });
    this.inFlight.set(key, check);
    try {
      return await check;
    } finally {
      if (this.inFlight.get(key) === check) this.inFlight.delete(key);
    }
  }

  /** Forgets every remembered answer (e.g. after changing memberships in bulk). */
  clear(): void {
    this.cache.clear();
  }

  protected async ask(sessionToken: string): Promise<VerifiedSession | null> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let me: Record<string, unknown>;
    try {
      me = await this.parse.request<Record<string, unknown>>(
        'GET',
        '/users/me',
        undefined,
        { sessionToken },
        signal,
      );
    } catch (error) {
      if (this.rejectsToken(error)) return null;
      throw new SessionCheckUnavailableError(
        'The session check could not reach Parse Server in time; retry shortly.',
      );
    }
    const userId = typeof me.objectId === 'string' ? me.objectId : '';
    if (!userId) {
      throw new SessionCheckUnavailableError(
        'Parse Server answered the session check without a user id; retry shortly.',
      );
    }
    let tenant = NO_TENANT_SOURCE;
    if (this.tenantSource) {
      try {
        tenant = await tenantOfUser(this.parse, userId, this.tenantSource, signal);
      } catch {
        // Without the answer there is no tenant to bind: retry later, never guess.
        throw new SessionCheckUnavailableError(
          "The tenant check could not read the user's tenant from Parse Server; retry shortly.",
        );
      }
    }
    return { userId, username: typeof me.username === 'string' ? me.username : '', tenant };
  }

  /** Parse refused the token itself (4xx), as opposed to being unreachable, slow or failing. */
  protected rejectsToken(error: unknown): boolean {
    return (
      error instanceof ParseRequestError &&
      error.status !== undefined &&
      error.status >= 400 &&
      error.status < 500 &&
      error.status !== 429
    );
  }

  protected remember(key: string, session: VerifiedSession | null): void {
    if (this.cacheTtlMs <= 0) return;
    this.cache.delete(key);
    while (this.cache.size >= this.maxEntries && this.cache.size > 0) {
      this.cache.delete(this.cache.keys().next().value as string);
    }
    if (this.maxEntries > 0) this.cache.set(key, { at: this.now(), session });
  }
}

// Holds the Parse client and answers cached by token digest.
printClassAs(ParseSessionVerifier);
