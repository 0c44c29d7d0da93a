import { Inject, Injectable } from '@nestjs/common';
import type { ParseAgentPrincipal } from '../../auth/parse-agent-principal';
import { apiKeyOf, bearerTokenOf } from '../../auth/request-credentials';
import { secretsEqual } from '../../auth/secrets-equal';
import { ParseSessionVerifier } from '../../auth/session-verifier';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../../composition/parse-agent-options.interface';
import { ParseSessionGuard, type GuardedRequest } from './parse-session.guard';

/**
 * The shipped guards together: a bearer Parse session (as ParseSessionGuard), else the operator
 * key (as McpApiKeyGuard, when `auth.apiKey` is set). A request with a bearer token is judged by
 * it alone; one with neither credential is 401.
 */
@Injectable()
export class ParseAgentAuthGuard extends ParseSessionGuard {
  constructor(
    sessions: ParseSessionVerifier,
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly options: ParseAgentModuleOptions,
  ) {
    super(sessions);
  }

  protected override async authenticate(
    request: GuardedRequest,
  ): Promise<ParseAgentPrincipal | undefined> {
    const token = bearerTokenOf(request.headers);
    if (token !== undefined) return this.authenticateSession(request, token);
    const presented = apiKeyOf(request.headers);
    const expected = this.options?.auth?.apiKey;
    if (presented !== undefined && expected && secretsEqual(presented, expected))
      return { kind: 'operator' };
    return undefined;
  }
}
