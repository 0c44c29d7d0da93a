import { Logger, type Provider } from '@nestjs/common';
import { AgentEvents } from '../core/agent-events';
import { suppressSecurityBanners } from '../core/security-banner';
import type { AgentServices } from '../agent/parse-agent';
import { conversationFactory, resolveLlmProvider } from '../client/conversation-factory';
import { DataRouter } from '../data/data-router';
import { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import { ParseRestDataPathProvider } from '../data/parse-rest/parse-rest-data-path';
import { PostgresDataAccess, PostgresDataPathProvider } from '../data/postgres/postgres-data-path';
import { createMongoDataPathProvider } from '../data/mongo/create-mongo-data-path';
import { SchemaCache } from '../data/schema-cache';
import { BUILTIN_PROMPTS } from '../mcp/builtin-prompts';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { PromptRegistry } from '../mcp/prompt-registry';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { DataPathProvider } from '../ports/data-path';
import { KeyedSlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import { LlmProvider } from '../ports/llm-provider';
import { RateLimiter } from '../ports/rate-limiter';
import type { RedisConnection } from '../redis/redis-connection';
import { RedisRateLimiter } from '../redis/redis-rate-limiter';
import { BUILTIN_TOOLS } from '../tools/builtin';
import { ToolRegistry } from '../tools/tool-registry';
import { PARSE_AGENT_REDIS, PARSE_AGENT_SERVICES } from './parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import type { ParseAgentModuleOptions } from './parse-agent-options.interface';
import { REDIS_LOG_CONTEXT, redisConnectionProvider } from './redis/redis.providers';
import { validateModuleOptions } from './validate-module-options';

/** The providers of the configured module: registries, ports with their defaults, services. */
export const parseAgentProviders: Provider[] = [
  {
    provide: MetadataRegistry,
    useFactory: (options: ParseAgentModuleOptions) => {
      validateModuleOptions(options);
      if (options.suppressSecurityBanners) suppressSecurityBanners();
      const registry = new MetadataRegistry({ unregisteredClasses: options.unregisteredClasses });
      registry.register(...(options.models ?? []));
      for (const entry of options.hiddenClasses ?? []) {
        if (typeof entry === 'string') registry.hide(entry);
        else registry.hide(entry.className, { except: entry.except });
      }
      return registry;
    },
    inject: [PARSE_AGENT_MODULE_OPTIONS],
  },
  { provide: ToolRegistry, useFactory: () => new ToolRegistry(BUILTIN_TOOLS) },
  { provide: PromptRegistry, useFactory: () => new PromptRegistry(BUILTIN_PROMPTS) },
  {
    provide: McpDispatcher,
    useFactory: (tools: ToolRegistry, prompts: PromptRegistry, options: ParseAgentModuleOptions) =>
      new McpDispatcher(tools, prompts, { wrapUntrustedData: options.wrapUntrustedData }),
    inject: [ToolRegistry, PromptRegistry, PARSE_AGENT_MODULE_OPTIONS],
  },
  { provide: AgentEvents, useFactory: () => new AgentEvents() },
  redisConnectionProvider,
  {
    // With the redis option the window is shared by every node (one limit per principal overall).
    provide: RateLimiter,
    useFactory: (options: ParseAgentModuleOptions, redis: RedisConnection | null): RateLimiter =>
      options.rateLimiter ??
      (redis
        ? new RedisRateLimiter(redis, { logger: new Logger(REDIS_LOG_CONTEXT) })
        : new KeyedSlidingWindowRateLimiter()),
    inject: [PARSE_AGENT_MODULE_OPTIONS, PARSE_AGENT_REDIS],
  },
  {
    provide: ParseRestClient,
    useFactory: (options: ParseAgentModuleOptions) =>
      new ParseRestClient(validateModuleOptions(options).parse),
    inject: [PARSE_AGENT_MODULE_OPTIONS],
  },
  {
    provide: SchemaCache,
    useFactory: (options: ParseAgentModuleOptions, parse: ParseRestClient) =>
      new SchemaCache(parse, options.schemaCacheTtlMs ?? 30_000),
    inject: [PARSE_AGENT_MODULE_OPTIONS, ParseRestClient],
  },
  {
    // Only when `postgres` is configured; the pg driver is loaded here, on first use.
    provide: PostgresDataAccess,
    useFactory: (options: ParseAgentModuleOptions, parse: ParseRestClient) =>
      options.postgres ? new PostgresDataAccess(options.postgres, parse) : null,
    inject: [PARSE_AGENT_MODULE_OPTIONS, ParseRestClient],
  },
  {
    // Tried in order by the DataRouter. Parse REST serves session-token and master-key reads;
    // direct database paths join this list when configured.
    provide: DataPathProvider,
    useFactory: (
      options: ParseAgentModuleOptions,
      parse: ParseRestClient,
      postgres: PostgresDataAccess | null,
    ): DataPathProvider[] => {
      const providers: DataPathProvider[] = [
        new ParseRestDataPathProvider(parse, options.parse.database),
      ];
      if (postgres) providers.push(new PostgresDataPathProvider(postgres));
      // The driver is loaded and connected on first use, so boot never waits on MongoDB.
      if (options.mongo) providers.push(createMongoDataPathProvider(options.mongo, parse));
      return providers;
    },
    inject: [PARSE_AGENT_MODULE_OPTIONS, ParseRestClient, PostgresDataAccess],
  },
  {
    provide: DataRouter,
    useFactory: (providers: DataPathProvider[]) => new DataRouter(providers),
    inject: [DataPathProvider],
  },
  {
    // The configured language model, or null: conversations then say how to configure one.
    provide: LlmProvider,
    useFactory: (options: ParseAgentModuleOptions): LlmProvider | null =>
      resolveLlmProvider(options.llm) ?? null,
    inject: [PARSE_AGENT_MODULE_OPTIONS],
  },
  {
    provide: PARSE_AGENT_SERVICES,
    useFactory: (
      metadata: MetadataRegistry,
      tools: ToolRegistry,
      events: AgentEvents,
      rateLimiter: RateLimiter,
      data: DataRouter,
      schemas: SchemaCache,
      options: ParseAgentModuleOptions,
      llm: LlmProvider | null,
    ): AgentServices => ({
      data,
      schemas,
      metadata,
      tools,
      events,
      rateLimiter,
      analytics: options.analytics,
      queryLimits: options.queryLimits,
      conversations: conversationFactory({ provider: llm ?? undefined }),
    }),
    inject: [
      MetadataRegistry,
      ToolRegistry,
      AgentEvents,
      RateLimiter,
      DataRouter,
      SchemaCache,
      PARSE_AGENT_MODULE_OPTIONS,
      LlmProvider,
    ],
  },
];
