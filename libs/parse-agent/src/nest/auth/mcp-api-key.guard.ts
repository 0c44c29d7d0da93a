import {
  Inject,
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { ParseAgentOperatorPrincipal } from '../../auth/parse-agent-principal';
import { setPrincipal } from '../../auth/parse-agent-principal';
import { apiKeyOf } from '../../auth/request-credentials';
import { secretsEqual } from '../../auth/secrets-equal';
import { ParseAgentConfigError } from '../../core/errors';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../../composition/parse-agent-options.interface';
import type { GuardedRequest } from './parse-session.guard';
import { printClassAs } from '../../core/secret-display';

/**
 * `X-MCP-API-Key: <auth.apiKey>`: the operator. The key is compared in constant time (both sides
 * hashed, then timingSafeEqual); the operator principal goes on the request. Anything else is 401.
 * Without `auth.apiKey` the guard refuses to start.
 */
@Injectable()
export class McpApiKeyGuard implements CanActivate {
  protected readonly apiKey: string;

  constructor(
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly options: ParseAgentModuleOptions,
  ) {
    const key = options?.auth?.apiKey;
    if (typeof key !== 'string' || !key) {
      throw new ParseAgentConfigError(
        'McpApiKeyGuard needs the operator key: set auth.apiKey in the ParseAgentModule options.',
      );
    }
    this.apiKey = key;
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const principal = this.authenticate(request);
    if (!principal) throw new UnauthorizedException();
    setPrincipal(request, principal);
    return true;
  }

  /** The operator when the request carries the right key, else undefined. */
  protected authenticate(request: GuardedRequest): ParseAgentOperatorPrincipal | undefined {
    const presented = apiKeyOf(request.headers);
    return presented !== undefined && secretsEqual(presented, this.apiKey)
      ? { kind: 'operator' }
      : undefined;
  }
}

// Holds the operator key.
printClassAs(McpApiKeyGuard);
