import { Inject, Injectable, Optional } from '@nestjs/common';
import { ParseAgent, type AgentOptions, type AgentServices } from '../agent/parse-agent';
import { ParseSessionVerifier } from '../auth/session-verifier';
import { AgentUnauthorizedError, ParseAgentConfigError } from '../core/errors';
import { identityValue } from '../core/identity-value';
import { auditMetadata, type MetadataAuditReport } from '../metadata/metadata-audit';
import { conversationFactory } from '../client/conversation-factory';
import type { ParseAgentConversation } from '../client/parse-agent-conversation';
import type { ConversationOptions } from '../ports/conversation';
import { LlmProvider } from '../ports/llm-provider';
import { PARSE_AGENT_SERVICES } from './parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../composition/parse-agent-options.interface';
import { printClassAs } from '../core/secret-display';
import { checkImpersonateOption } from '../agent/agent-impersonation';

/** Creates agents bound to the module's Parse connection, registries and defaults. */
@Injectable()
export class ParseAgentFactory {
  constructor(
    @Inject(PARSE_AGENT_SERVICES) protected readonly services: AgentServices,
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly options: ParseAgentModuleOptions,
    @Optional() @Inject(LlmProvider) protected readonly llm: LlmProvider | null = null,
    @Optional()
    @Inject(ParseSessionVerifier)
    protected readonly sessions: ParseSessionVerifier | null = null,
  ) {}

  /**
   * An agent from `options` (module defaults applied). With `validateSession: true` it throws:
   * checking the token needs a round trip, so use `createValidated`.
   */
  create(options: AgentOptions = {}): ParseAgent {
    return new ParseAgent({ ...this.options.defaults, ...options }, this.services);
  }

  /**
   * An agent whose session token Parse Server has accepted (`/users/me`, through the module's
   * cached session verifier) before it is returned: a logged-out or unknown token rejects with
   * AgentUnauthorizedError (the MCP layer's 401) before any tool runs; Parse Server unreachable
   * rejects with SessionCheckUnavailableError (503). An agent without a session token (master
   * key, aclUser, aclRole) has nothing to check and is created as by create(). With
   * `impersonate`, the agent is built with the master key and then bound to a session of that
   * user (see ParseAgent.impersonate); any failure rejects, and no agent is returned.
   */
  async createValidated(options: AgentOptions = {}): Promise<ParseAgent> {
    const { impersonate, ...rest } = options;
    const merged = { ...this.options.defaults, ...rest, validateSession: undefined };
    if (impersonate !== undefined) {
      // A master-key agent first, then the user's session; a failure leaves no agent at all.
      const { user, mint, label } = checkImpersonateOption(impersonate);
      const agent = new ParseAgent(merged, this.services);
      return agent.impersonate(user, { mint, label, signal: merged.signal });
    }
    // A blank token is refused here, before anything is checked or built: never "no token".
    const token = identityValue('sessionToken', merged.sessionToken) ?? merged.parent?.sessionToken;
    if (token) {
      if (!this.sessions) {
        throw new ParseAgentConfigError(
          'createValidated needs the ParseSessionVerifier provider of ParseAgentModule; import the module (forRoot) rather than providing ParseAgentFactory alone.',
        );
      }
      const session = await this.sessions.verify(token);
      if (!session) {
        throw new AgentUnauthorizedError('Unauthorized', {
          reason:
            'Parse Server rejected the session token (/users/me): logged out, expired or unknown.',
        });
      }
    }
    return new ParseAgent(merged, this.services);
  }

  /**
   * Forgets what the module caches about the database: Parse schemas (field types, CLP,
   * protectedFields) and the direct paths' schemas and role expansions. Call it after changing a
   * schema, CLP or a role's members at run time, when the next call must not wait for the caches'
   * TTLs.
   */
  invalidateCaches(): void {
    this.services.schemas.invalidate();
    this.services.data.invalidate();
  }

  /** Compares the registered models with the server's schemas (see MetadataAuditReport). */
  async auditMetadata(): Promise<MetadataAuditReport> {
    return auditMetadata(this.services.metadata, (await this.services.schemas.all()).values());
  }

  /** True when a language model is configured (module `llm` option, LLM_PROVIDER, or the token). */
  get conversationsEnabled(): boolean {
    return Boolean(this.llm);
  }

  /**
   * A conversation in which the configured language model answers with the tools of an agent
   * created from `agentOptions` (module defaults applied), under that agent's identity.
   */
  conversation(
    agentOptions: AgentOptions | ParseAgent = {},
    conversationOptions: ConversationOptions = {},
  ): ParseAgentConversation {
    const agent = agentOptions instanceof ParseAgent ? agentOptions : this.create(agentOptions);
    return conversationFactory({ provider: this.llm ?? undefined })(agent, conversationOptions);
  }
}

// Holds the module options (the master key, the operator key) and the services.
printClassAs(ParseAgentFactory);
