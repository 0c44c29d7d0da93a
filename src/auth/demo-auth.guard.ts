import { createHash, timingSafeEqual } from 'node:crypto';
import {
  Inject,
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { DemoRequest } from './demo-principal';
import { SessionVerifier } from './session-verifier';

export const DEMO_API_KEY = Symbol('DEMO_API_KEY');

function sameSecret(a: string, b: string): boolean {
  // Hash first so the comparison is constant-time whatever the lengths.
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/**
 * Whether the request may open an MCP session. A POST whose body is still unread (the transport
 * defers bodies over its pre-auth limit until the guards accept) might be an `initialize`, so it
 * counts as one.
 */
function opensSession(method: string | undefined, body: unknown): boolean {
  if (method !== 'POST') return false;
  if (body === undefined) return true;
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (m) =>
      typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize',
  );
}

/**
 * The demo's authentication: `Authorization: Bearer <Parse session token>` for users,
 * `X-MCP-API-Key: <MCP_API_KEY>` for the operator. Everything else is 401.
 */
@Injectable()
export class DemoAuthGuard implements CanActivate {
  constructor(
    protected readonly sessions: SessionVerifier,
    @Inject(DEMO_API_KEY) protected readonly apiKey: string,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<
      DemoRequest & {
        headers: Record<string, string | undefined>;
        method?: string;
        body?: unknown;
      }
    >();
    const authorization = request.headers.authorization;
    const bearer = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
    if (bearer) {
      // Opening an MCP session always asks Parse, so a logged-out token cannot start one.
      const user = await this.sessions.verify(bearer, {
        fresh: opensSession(request.method, request.body),
      });
      if (!user) throw new UnauthorizedException();
      request.demoPrincipal = { kind: 'user', sessionToken: bearer, ...user };
      return true;
    }
    const key = request.headers['x-mcp-api-key'];
    if (typeof key === 'string' && key && sameSecret(key, this.apiKey)) {
      request.demoPrincipal = { kind: 'operator' };
      return true;
    }
    throw new UnauthorizedException();
  }
}
