import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentToolExplorer } from './agent-tool.explorer';
import { AgentEvents } from '../core/agent-events';
import { ParseRestClient } from '../data/parse-rest-client';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { PromptRegistry } from '../mcp/prompt-registry';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { ToolRegistry } from '../tools/tool-registry';
import { PARSE_AGENT_RATE_LIMITER } from './parse-agent.constants';
import { ParseAgentFactory } from './parse-agent.factory';
import {
  ConfigurableModuleClass,
  PARSE_AGENT_MODULE_OPTIONS,
} from './parse-agent.module-definition';
import { parseAgentProviders, PARSE_AGENT_SERVICES } from './parse-agent.providers';
import { MCP_AGENT_FACTORY, MCP_MODULE_OPTIONS } from './mcp/mcp-http.constants';

/** The configured module behind ParseAgentModule.forRoot / forRootAsync (global by default). */
@Module({
  imports: [DiscoveryModule],
  providers: [
    ...parseAgentProviders,
    ParseAgentFactory,
    AgentToolExplorer,
    // Aliases the MCP endpoint injects (its files cannot import these two; see mcp-http.constants).
    { provide: MCP_AGENT_FACTORY, useExisting: ParseAgentFactory },
    { provide: MCP_MODULE_OPTIONS, useExisting: PARSE_AGENT_MODULE_OPTIONS },
  ],
  exports: [
    ParseAgentFactory,
    MetadataRegistry,
    ToolRegistry,
    PromptRegistry,
    McpDispatcher,
    AgentEvents,
    ParseRestClient,
    PARSE_AGENT_RATE_LIMITER,
    PARSE_AGENT_SERVICES,
    PARSE_AGENT_MODULE_OPTIONS,
  ],
})
export class ParseAgentCoreModule extends ConfigurableModuleClass implements OnApplicationShutdown {
  constructor(protected readonly parse: ParseRestClient) {
    super();
  }

  /** Releases the keep-alive sockets to Parse Server so the process can exit. */
  onApplicationShutdown(): void {
    this.parse.close();
  }
}
