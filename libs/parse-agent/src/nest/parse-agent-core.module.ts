import { Module } from '@nestjs/common';
import { AgentEvents } from '../core/agent-events';
import { ParseRestClient } from '../data/parse-rest-client';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { ToolRegistry } from '../tools/tool-registry';
import { PARSE_AGENT_RATE_LIMITER } from './parse-agent.constants';
import { ParseAgentFactory } from './parse-agent.factory';
import {
  ConfigurableModuleClass,
  PARSE_AGENT_MODULE_OPTIONS,
} from './parse-agent.module-definition';
import { parseAgentProviders, PARSE_AGENT_SERVICES } from './parse-agent.providers';

/** The configured module behind ParseAgentModule.forRoot / forRootAsync (global by default). */
@Module({
  providers: [...parseAgentProviders, ParseAgentFactory],
  exports: [
    ParseAgentFactory,
    MetadataRegistry,
    ToolRegistry,
    AgentEvents,
    ParseRestClient,
    PARSE_AGENT_RATE_LIMITER,
    PARSE_AGENT_SERVICES,
    PARSE_AGENT_MODULE_OPTIONS,
  ],
})
export class ParseAgentCoreModule extends ConfigurableModuleClass {}
