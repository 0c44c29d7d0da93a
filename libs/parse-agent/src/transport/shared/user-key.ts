import { hash } from 'node:crypto';
import type { AgentIdentity } from '../../core/agent-identity';
import { AgentUnauthorizedError, ParseAgentError, ParseRequestError } from '../../core/errors';

/** Resolves a Parse session token to its user's objectId (Parse Server's `/users/me`). */
export type SessionUserLookup = (sessionToken: string) => Promise<string>;

/** Parse Server could not say whose session token this is (down, slow): refuse for now (503). */
export class UserUnresolvedError extends ParseAgentError {
  readonly errorCode = 'user_unresolved';
  readonly retryAfter = 2;
  constructor() {
    super(
      'Service Unavailable: Parse Server could not confirm whose session token this is, so no session is opened; retry shortly.',
    );
  }
}

const digest = (text: string) => hash('sha256', text, 'base64url');
/** Parse's "invalid session token". */
const INVALID_SESSION_TOKEN = 209;

/**
 * The stable identity a request acts for, as an opaque digest: sessions are counted and
 * `initialize` is rate-limited per user, whichever of that user's tokens the request carries.
 * A session-token agent is its Parse user (resolved once per token, then cached), an aclUser or
 * aclRole agent that user or role, a master-key agent the operator. A token Parse rejects is
 * refused (AgentUnauthorizedError), so made-up tokens cannot each count as a new user.
 */
export class UserKeys {
  protected readonly cache = new Map<string, { key: Promise<string>; expires: number }>();

  constructor(
    protected readonly lookup: SessionUserLookup,
    protected readonly ttlMs = 10 * 60_000,
    protected readonly maxEntries = 10_000,
    protected readonly now: () => number = () => Date.now(),
  ) {}

  /** The key of the host's own identity string (`mcp.userKey`). */
  static ofHostKey(value: string): string {
    return digest(`host\u0000${value}`);
  }

  of(agent: AgentIdentity): Promise<string> {
    if (agent.sessionToken) return this.ofSessionToken(agent.sessionToken);
    if (agent.aclUser) return Promise.resolve(digest(`user\u0000${agent.aclUser}`));
    if (agent.aclRole) return Promise.resolve(digest(`role\u0000${agent.aclRole}`));
    return Promise.resolve(digest('operator'));
  }

  protected ofSessionToken(token: string): Promise<string> {
    const tokenKey = digest(`token\u0000${token}`);
    const at = this.now();
    const cached = this.cache.get(tokenKey);
    if (cached && cached.expires > at) return cached.key;
    if (cached) this.cache.delete(tokenKey);
    if (this.cache.size >= this.maxEntries) {
      // Oldest entries first (insertion order): drop a tenth to stay bounded.
      let drop = Math.ceil(this.maxEntries / 10);
      for (const k of this.cache.keys()) {
        if (drop-- <= 0) break;
        this.cache.delete(k);
      }
    }
    const key: Promise<string> = Promise.resolve()
      .then(() => this.lookup(token))
      .then((userId) => {
        if (typeof userId !== 'string' || !userId) throw new UserUnresolvedError();
        return digest(`user\u0000${userId}`);
      })
      .catch((error: unknown) => {
        if (this.cache.get(tokenKey)?.key === key) this.cache.delete(tokenKey);
        if (error instanceof UserUnresolvedError) throw error;
        throw rejected(error)
          ? new AgentUnauthorizedError('Unauthorized', { reason: 'invalid session token' })
          : new UserUnresolvedError();
      });
    this.cache.set(tokenKey, { key, expires: at + this.ttlMs });
    return key;
  }
}

/** Parse refused the token itself (as opposed to being unreachable or failing). */
function rejected(error: unknown): boolean {
  if (!(error instanceof ParseRequestError)) return false;
  if (error.parseCode === INVALID_SESSION_TOKEN) return true;
  return (
    error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 429
  );
}
