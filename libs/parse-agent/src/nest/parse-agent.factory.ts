import { Inject, Injectable } from '@nestjs/common';
import { ParseAgent, type AgentOptions, type AgentServices } from '../agent/parse-agent';
import { auditMetadata, type MetadataAuditReport } from '../metadata/metadata-audit';
import { PARSE_AGENT_SERVICES } from './parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import type { ParseAgentModuleOptions } from './parse-agent-options.interface';

/** Creates agents bound to the module's Parse connection, registries and defaults. */
@Injectable()
export class ParseAgentFactory {
  constructor(
    @Inject(PARSE_AGENT_SERVICES) protected readonly services: AgentServices,
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly options: ParseAgentModuleOptions,
  ) {}

  create(options: AgentOptions = {}): ParseAgent {
    return new ParseAgent({ ...this.options.defaults, ...options }, this.services);
  }

  /** Compares the registered models with the server's schemas (see MetadataAuditReport). */
  async auditMetadata(): Promise<MetadataAuditReport> {
    return auditMetadata(this.services.metadata, (await this.services.schemas.all()).values());
  }
}
