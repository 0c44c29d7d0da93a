import {
  HttpException,
  Inject,
  Injectable,
  Optional,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RateLimiter } from '../../ports/rate-limiter';
import type { ResolvedMcpEndpointOptions } from '../../transport/http/mcp-endpoint-options';
import { checkPreAuthRate } from '../../transport/http/pre-auth-rate';
import { MCP_ENDPOINT_OPTIONS } from '../parse-agent.constants';
import { CONSOLE_OPTIONS } from './console.constants';
import type { ResolvedConsoleOptions } from './console-options';

/**
 * The console's pre-authentication limit, ahead of the host's guards: each anonymous request to
 * its API costs Parse a `/users/me` (sign-out a `/logout`, sign-in a `/login`) before anyone is
 * known, so a client address gets the same budget here as on the MCP endpoint, from the same
 * limiter and under the same key. Over it: 429 with `Retry-After`, and Parse is not asked.
 */
@Injectable()
export class ConsolePreAuthGuard implements CanActivate {
  protected readonly limiter?: RateLimiter;

  constructor(
    @Inject(CONSOLE_OPTIONS) options: ResolvedConsoleOptions,
    @Optional() @Inject(MCP_ENDPOINT_OPTIONS) mcp?: ResolvedMcpEndpointOptions,
  ) {
    const own = options.preAuthRateLimiter;
    this.limiter = own === false ? undefined : (own ?? mcp?.preAuthRateLimiter);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const refusal = await checkPreAuthRate(this.limiter, http.getRequest<IncomingMessage>());
    if (!refusal) return true;
    const res = http.getResponse<ServerResponse | { raw: ServerResponse }>();
    const raw = 'raw' in res ? res.raw : res;
    if (!raw.headersSent) raw.setHeader('Retry-After', String(refusal.retryAfter));
    throw new HttpException(refusal.message, refusal.status);
  }
}
