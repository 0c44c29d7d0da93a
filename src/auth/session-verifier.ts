import { createHash } from 'node:crypto';
import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import { ParseRequestError, ParseRestClient } from 'nestjs-parse-agent';

export interface VerifiedUser {
  userId: string;
  username: string;
  tenantId?: string;
}

/** Short, so a token revoked by logout stops working within seconds even mid-conversation. */
const TTL_MS = 10_000;
const MAX_ENTRIES = 5_000;
/** A stalled Parse Server must not hold a new user's request for longer than this. */
export const VERIFY_TIMEOUT_MS = 5_000;

/**
 * Checks a Parse session token with `/users/me` and remembers the answer for a few seconds, so a
 * burst of MCP messages does not pay an extra Parse round trip each. Calls that open a session
 * (`initialize`) always ask Parse (`fresh`). Keys are token hashes.
 */
@Injectable()
export class SessionVerifier {
  protected readonly cache = new Map<string, { at: number; user: VerifiedUser | null }>();

  constructor(
    protected readonly parse: ParseRestClient,
    protected readonly timeoutMs = VERIFY_TIMEOUT_MS,
    protected readonly ttlMs = TTL_MS,
  ) {}

  async verify(
    sessionToken: string,
    options: { fresh?: boolean } = {},
  ): Promise<VerifiedUser | null> {
    const key = createHash('sha256').update(sessionToken).digest('hex');
    const hit = this.cache.get(key);
    if (hit && !options.fresh && Date.now() - hit.at < this.ttlMs) return hit.user;
    let user: VerifiedUser | null = null;
    try {
      const me = await this.parse.request<Record<string, unknown>>(
        'GET',
        '/users/me',
        undefined,
        { sessionToken },
        AbortSignal.timeout(this.timeoutMs),
      );
      user = {
        userId: String(me.objectId),
        username: String(me.username),
        tenantId: typeof me.tenantId === 'string' ? me.tenantId : undefined,
      };
    } catch (error) {
      // Parse down or slow is not the user's fault: 503 (retry), never a cached refusal.
      if (
        !(error instanceof ParseRequestError) ||
        error.status === undefined ||
        error.status >= 500
      ) {
        throw new ServiceUnavailableException('The session check could not reach Parse Server.');
      }
    }
    this.cache.delete(key);
    if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { at: Date.now(), user });
    return user;
  }
}
