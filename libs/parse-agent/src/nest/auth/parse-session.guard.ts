import {
  Injectable,
  ServiceUnavailableException,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import {
  setPrincipal,
  type ParseAgentPrincipal,
  type ParseAgentUserPrincipal,
} from '../../auth/parse-agent-principal';
import { bearerTokenOf, mayOpenMcpSession } from '../../auth/request-credentials';
import {
  ParseSessionVerifier,
  SessionCheckUnavailableError,
  type VerifiedSession,
} from '../../auth/session-verifier';
import { printClassAs } from '../../core/secret-display';

/** The HTTP request as the shipped guards read it (a parsed body may or may not be there). */
export type GuardedRequest = IncomingMessage & { body?: unknown };

/**
 * `Authorization: Bearer <Parse session token>`: the token is checked with Parse Server
 * (`/users/me`, with the timeout and short cache of `auth.session`), and the user and their tenant
 * (`auth.tenant`) are put on the request as a ParseAgentPrincipal. A missing or rejected token is
 * 401; Parse Server down or slow is 503, never a cached refusal. Requests that may open an MCP
 * session are always checked afresh, so a logged-out token cannot start one.
 */
@Injectable()
export class ParseSessionGuard implements CanActivate {
  constructor(protected readonly sessions: ParseSessionVerifier) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const principal = await this.authenticate(request);
    if (!principal) throw new UnauthorizedException();
    setPrincipal(request, principal);
    return true;
  }

  /** The caller of the request; undefined when it presents no credential this guard checks. */
  protected async authenticate(request: GuardedRequest): Promise<ParseAgentPrincipal | undefined> {
    const token = bearerTokenOf(request.headers);
    return token === undefined ? undefined : this.authenticateSession(request, token);
  }

  /** Checks a bearer token: the user's principal, or 401 (rejected) / 503 (Parse unavailable). */
  protected async authenticateSession(
    request: GuardedRequest,
    sessionToken: string,
  ): Promise<ParseAgentUserPrincipal> {
    let session: VerifiedSession | null;
    try {
      session = await this.sessions.verify(sessionToken, { fresh: this.needsFreshCheck(request) });
    } catch (error) {
      if (error instanceof SessionCheckUnavailableError)
        throw new ServiceUnavailableException(error.message);
      throw error;
    }
    if (!session) throw new UnauthorizedException();
    return this.userPrincipal(session, sessionToken);
  }

  /** Whether the cached answer may not be used: requests that may open an MCP session. */
  protected needsFreshCheck(request: GuardedRequest): boolean {
    return mayOpenMcpSession(request.method, request.body);
  }

  protected userPrincipal(session: VerifiedSession, sessionToken: string): ParseAgentUserPrincipal {
    return {
      kind: 'user',
      userId: session.userId,
      username: session.username,
      sessionToken,
      ...(session.tenant.tenantId !== undefined
        ? { tenantId: session.tenant.tenantId }
        : { noTenantReason: session.tenant.reason }),
    };
  }
}

// Holds the session verifier (and, as ParseAgentAuthGuard, the module options).
printClassAs(ParseSessionGuard);
