import { Inject, Injectable, Optional } from '@nestjs/common';
import { ParseAgent, type AgentOptions, type AgentServices } from '../agent/parse-agent';
import { auditMetadata, type MetadataAuditReport } from '../metadata/metadata-audit';
import { conversationFactory } from '../client/conversation-factory';
import type { ParseAgentConversation } from '../client/parse-agent-conversation';
import type { ConversationOptions } from '../ports/conversation';
import { LlmProvider } from '../ports/llm-provider';
import { PARSE_AGENT_SERVICES } from './parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import type { ParseAgentModuleOptions } from './parse-agent-options.interface';

/** Creates agents bound to the module's Parse connection, registries and defaults. */
@Injectable()
export class ParseAgentFactory {
  constructor(
    @Inject(PARSE_AGENT_SERVICES) protected readonly services: AgentServices,
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly options: ParseAgentModuleOptions,
    @Optional() @Inject(LlmProvider) protected readonly llm: LlmProvider | null = null,
  ) {}

  create(options: AgentOptions = {}): ParseAgent {
    return new ParseAgent({ ...this.options.defaults, ...options }, this.services);
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
