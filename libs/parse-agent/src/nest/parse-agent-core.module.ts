import { ParseAgentLibraryModule } from './parse-agent-library.marker';
import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentEvents } from '../core/agent-events';
import { DataRouter } from '../data/data-router';
import { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import { SchemaCache } from '../data/schema-cache';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { PromptRegistry } from '../mcp/prompt-registry';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { LlmProvider } from '../ports/llm-provider';
import { RateLimiter } from '../ports/rate-limiter';
import { ToolRegistry } from '../tools/tool-registry';
import { AgentToolExplorer } from './agent-tool.explorer';
import { PARSE_AGENT_SERVICES } from './parse-agent.constants';
import { ParseAgentFactory } from './parse-agent.factory';
import {
  ConfigurableModuleClass,
  PARSE_AGENT_MODULE_OPTIONS,
} from './parse-agent.module-definition';
import { parseAgentProviders } from './parse-agent.providers';

/** The configured module behind ParseAgentModule.forRoot / forRootAsync (global by default). */
@ParseAgentLibraryModule()
@Module({
  imports: [DiscoveryModule],
  providers: [...parseAgentProviders, ParseAgentFactory, AgentToolExplorer],
  exports: [
    ParseAgentFactory,
    MetadataRegistry,
    ToolRegistry,
    PromptRegistry,
    McpDispatcher,
    AgentEvents,
    ParseRestClient,
    SchemaCache,
    DataRouter,
    RateLimiter,
    LlmProvider,
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
