import { Logger, type InjectionToken, type Provider } from '@nestjs/common';
import type { AgentServices } from '../agent/parse-agent';
import { composeAgentServices, type AgentComposition } from '../composition/compose-agent-services';
import { AgentEvents } from '../core/agent-events';
import { routeSecurityBanners, suppressSecurityBanners } from '../core/security-banner';
import { DataRouter } from '../data/data-router';
import { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import { SchemaCache } from '../data/schema-cache';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { PromptRegistry } from '../mcp/prompt-registry';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { DataPathProvider } from '../ports/data-path';
import { LlmProvider } from '../ports/llm-provider';
import { EmbeddingProvider } from '../ports/embedding-provider';
import { SearchIndexer } from '../retrieval/search-indexer';
import { RateLimiter } from '../ports/rate-limiter';
import type { RedisConnection } from '../redis/redis-connection';
import { ToolRegistry } from '../tools/tool-registry';
import {
  PARSE_AGENT_COMPOSITION,
  PARSE_AGENT_REDIS,
  PARSE_AGENT_SERVICES,
} from './parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../composition/parse-agent-options.interface';
import { REDIS_LOG_CONTEXT, redisConnectionProvider } from './redis/redis.providers';
import { validateModuleOptions } from '../composition/validate-module-options';

/** Log contexts of the module's own lines (Nest's Logger, so they follow the app's format). */
const SECURITY_LOG_CONTEXT = 'ParseAgentSecurity';
const agentLog = new Logger('ParseAgent');

/** One injectable token per part of the composition, all the same instances. */
function part<T>(provide: InjectionToken, pick: (c: AgentComposition) => T): Provider {
  return { provide, useFactory: pick, inject: [PARSE_AGENT_COMPOSITION] };
}

/**
 * The providers of the configured module. Everything is built once by the composition root (the
 * one the standalone server and the CLI use too); each token hands out its part, so registries,
 * ports and services stay injectable one by one. Port options (`rateLimiter`, `dataPathProviders`,
 * `llmProvider`...) replace the library's defaults there.
 */
export const parseAgentProviders: Provider[] = [
  redisConnectionProvider,
  {
    provide: PARSE_AGENT_COMPOSITION,
    useFactory: (
      options: ParseAgentModuleOptions,
      redis: RedisConnection | null,
    ): AgentComposition => {
      validateModuleOptions(options);
      if (options.suppressSecurityBanners) suppressSecurityBanners();
      // Banners join the application's log stream (JSON lines when its logger writes JSON).
      const security = new Logger(SECURITY_LOG_CONTEXT);
      routeSecurityBanners((message) => security.warn(message));
      return composeAgentServices(options, {
        redis,
        // Tool failures and agent warnings go through Nest's logger, like the module's other lines.
        warn: (message) => agentLog.warn(message),
        redisLogger: new Logger(REDIS_LOG_CONTEXT),
        optionsName: 'ParseAgentModule.forRoot',
      });
    },
    inject: [PARSE_AGENT_MODULE_OPTIONS, PARSE_AGENT_REDIS],
  },
  part(MetadataRegistry, (c) => c.metadata),
  part(ToolRegistry, (c) => c.tools),
  part(PromptRegistry, (c) => c.prompts),
  part(McpDispatcher, (c) => c.dispatcher),
  part(AgentEvents, (c) => c.events),
  part(RateLimiter, (c): RateLimiter => c.rateLimiter),
  part(ParseRestClient, (c) => c.parse),
  part(SchemaCache, (c) => c.schemas),
  // The providers the DataRouter ranks: the library's, or the application's.
  part(DataPathProvider, (c): DataPathProvider[] => c.dataPathProviders),
  part(DataRouter, (c) => c.data),
  // The configured language model, or null: conversations then say how to configure one.
  part(LlmProvider, (c): LlmProvider | null => c.llm),
  // The configured embeddings and the indexer an app calls from its save path, or null.
  part(EmbeddingProvider, (c): EmbeddingProvider | null => c.embeddings),
  part(SearchIndexer, (c): SearchIndexer | null => c.indexer),
  part(PARSE_AGENT_SERVICES, (c): AgentServices => c.services),
];
