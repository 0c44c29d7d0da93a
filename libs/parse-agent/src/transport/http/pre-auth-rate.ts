import type { IncomingMessage } from 'node:http';
import { RateLimitExceededError, RateLimiterUnavailableError } from '../../core/errors';
import type { RateLimiter } from '../../ports/rate-limiter';

/** Why a request was refused before authentication, and when to come back. */
export interface PreAuthRefusal {
  /** 429 over the limit; 503 when the limiter could not count (its store down, or a fault). */
  status: 429 | 503;
  message: string;
  /** Seconds, for `Retry-After`. */
  retryAfter: number;
}

/**
 * The pre-authentication rate check of every HTTP door that costs Parse a round trip before it
 * knows the caller: the MCP endpoint's gate, and the console's API, sign-in and sign-out. One key
 * per client address (`mcp:<ip>`), the same for all of them, so a client's anonymous requests
 * share one budget whichever door they knock on. Resolves to undefined when the request may go on.
 */
export async function checkPreAuthRate(
  limiter: RateLimiter | undefined,
  req: IncomingMessage & { ip?: string },
): Promise<PreAuthRefusal | undefined> {
  if (!limiter) return undefined;
  try {
    await limiter.check(`mcp:${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`);
    return undefined;
  } catch (error) {
    const retryAfter = Number((error as { retryAfter?: unknown })?.retryAfter);
    const limited =
      error instanceof RateLimitExceededError && !(error instanceof RateLimiterUnavailableError);
    return {
      status: limited ? 429 : 503,
      message: limited ? 'Too Many Requests' : 'Service Unavailable: rate limiter unavailable',
      retryAfter: retryAfter > 0 ? Math.ceil(retryAfter) : limited ? 1 : 2,
    };
  }
}
