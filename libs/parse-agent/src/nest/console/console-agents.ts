import {
  BadRequestException,
  ForbiddenException,
  Inject,
  Injectable,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { ParseAgent, type AgentServices } from '../../agent/parse-agent';
import { principalOf } from '../../auth/parse-agent-principal';
import { SessionCheckUnavailableError } from '../../auth/session-verifier';
import {
  AccessDeniedError,
  AgentUnauthorizedError,
  ParseAgentConfigError,
} from '../../core/errors';
import type { McpRequest } from '../../transport/http/mcp-request';
import { agentFromFactoryResult } from '../../transport/shared/resolve-agent';
import { PARSE_AGENT_SERVICES } from '../parse-agent.constants';
import { ParseAgentFactory } from '../parse-agent.factory';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../../composition/parse-agent-options.interface';
import { CONSOLE_OPTIONS } from './console.constants';
import type { ConsoleCaller, ResolvedConsoleOptions } from './console-options';
import { printClassAs } from '../../core/secret-display';

/**
 * The agent behind a console request: the module's own `agentFactory`, exactly as the MCP
 * endpoint runs it, so the console can never see or do more than an MCP client with the same
 * credentials. A refusal is a 401 that names no reason.
 */
@Injectable()
export class ConsoleAgents {
  constructor(
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly moduleOptions: ParseAgentModuleOptions,
    @Inject(CONSOLE_OPTIONS) protected readonly options: ResolvedConsoleOptions,
    @Inject(ParseAgentFactory) protected readonly agents: ParseAgentFactory,
    @Inject(PARSE_AGENT_SERVICES) readonly services: AgentServices,
  ) {
    if (typeof moduleOptions?.agentFactory !== 'function') {
      throw new ParseAgentConfigError(
        "ParseAgentConsoleModule needs the agentFactory(request) option of ParseAgentModule.forRoot (the same one the MCP endpoint uses), so the console acts with the caller's own agent.",
      );
    }
  }

  async agentFor(request: unknown): Promise<ParseAgent> {
    let agent: ParseAgent;
    try {
      const produced = await this.moduleOptions.agentFactory!(request as McpRequest);
      agent = await agentFromFactoryResult(produced, this.agents);
    } catch (error) {
      if (error instanceof AgentUnauthorizedError) throw new UnauthorizedException();
      if (error instanceof SessionCheckUnavailableError)
        throw new ServiceUnavailableException(
          'Parse Server could not check the session; try again.',
        );
      throw error;
    }
    const user = impersonationHeader(request);
    return user === undefined ? agent : this.actAs(request, agent, user);
  }

  /**
   * The operator's view acting as a user (`X-Parse-Agent-Impersonate: <userId>`): the operator's
   * master-key agent takes on a real session of that user (ParseAgent.impersonate). Anyone else
   * sending the header is refused, never served as themselves.
   */
  protected async actAs(request: unknown, agent: ParseAgent, user: string): Promise<ParseAgent> {
    if (!(await this.isOperator(request))) {
      throw new ForbiddenException(`Only the operator may act as a user (${IMPERSONATE_HEADER}).`);
    }
    try {
      return await agent.impersonate(user, { label: 'console operator' });
    } catch (error) {
      if (error instanceof AccessDeniedError) throw new ForbiddenException(error.message);
      if (error instanceof ParseAgentConfigError) throw new BadRequestException(error.message);
      throw error;
    }
  }

  /** Whom the request acts for, as the page prints it. */
  callerOf(request: unknown, agent: ParseAgent): ConsoleCaller {
    const own = this.options.callerOf?.(request);
    if (own) return own;
    const principal = principalOf(request);
    if (principal?.kind === 'user') {
      return {
        kind: 'user',
        label: principal.username,
        userId: principal.userId,
        ...(principal.tenantId !== undefined ? { tenantId: principal.tenantId } : {}),
      };
    }
    if (principal?.kind === 'operator') return { kind: 'operator', label: 'operator' };
    return { kind: 'unknown', label: `${agent.authType} agent` };
  }

  /** Only the operator watches activity; anything unclear is a no (fail closed). */
  async isOperator(request: unknown): Promise<boolean> {
    try {
      if (this.options.isOperator) return (await this.options.isOperator(request)) === true;
    } catch {
      return false;
    }
    return principalOf(request)?.kind === 'operator';
  }
}

// Holds the module options.
printClassAs(ConsoleAgents);

/** The request header with which the console's operator view acts as a user. */
export const IMPERSONATE_HEADER = 'X-Parse-Agent-Impersonate';

function impersonationHeader(request: unknown): string | undefined {
  const headers = (request as { headers?: Record<string, unknown> } | undefined)?.headers;
  const value = headers?.[IMPERSONATE_HEADER.toLowerCase()];
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}
