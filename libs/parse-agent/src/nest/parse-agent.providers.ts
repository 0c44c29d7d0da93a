import type { Provider } from '@nestjs/common';
import { AgentEvents } from '../core/agent-events';
import { suppressSecurityBanners } from '../core/security-banner';
import type { AgentServices } from '../agent/parse-agent';
import { conversationFactory, resolveLlmProvider } from '../client/conversation-factory';
import { DataRouter } from '../data/data-router';
import { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import { ParseRestDataPathProvider } from '../data/parse-rest/parse-rest-data-path';
import { SchemaCache } from '../data/schema-cache';
import { BUILTIN_PROMPTS } from '../mcp/builtin-prompts';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { PromptRegistry } from '../mcp/prompt-registry';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { DataPathProvider } from '../ports/data-path';
import { KeyedSlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import { LlmProvider } from '../ports/llm-provider';
import { RateLimiter } from '../ports/rate-limiter';
import { BUILTIN_TOOLS } from '../tools/builtin';
import { ToolRegistry } from '../tools/tool-registry';
import { PARSE_AGENT_SERVICES } from './parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import type { ParseAgentModuleOptions } from './parse-agent-options.interface';
import { validateModuleOptions } from './validate-module-options';

/** The providers of the configured module: registries, ports with their defaults, services. */
export const parseAgentProviders: Provider[] = [
  {
    provide: MetadataRegistry,
    useFactory: (options: ParseAgentModuleOptions) => {
      validateModuleOptions(options);
      if (options.suppressSecurityBanners) suppressSecurityBanners();
      const registry = new MetadataRegistry();
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
    useFactory: (tools: ToolRegistry, prompts: PromptRegistry) => new McpDispatcher(tools, prompts),
    inject: [ToolRegistry, PromptRegistry],
  },
  { provide: AgentEvents, useFactory: () => new AgentEvents() },
  {
    provide: RateLimiter,
    useFactory: (options: ParseAgentModuleOptions): RateLimiter =>
      options.rateLimiter ?? new KeyedSlidingWindowRateLimiter(),
    inject: [PARSE_AGENT_MODULE_OPTIONS],
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
    // Tried in order by the DataRouter. Parse REST serves session-token and master-key reads;
    // direct database paths join this list when configured.
    provide: DataPathProvider,
    useFactory: (parse: ParseRestClient): DataPathProvider[] => [
      new ParseRestDataPathProvider(parse),
    ],
    inject: [ParseRestClient],
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
      llm: LlmProvider | null,
    ): AgentServices => ({
      data,
      schemas,
      metadata,
      tools,
      events,
      rateLimiter,
      conversations: conversationFactory({ provider: llm ?? undefined }),
    }),
    inject: [
      MetadataRegistry,
      ToolRegistry,
      AgentEvents,
      RateLimiter,
      DataRouter,
      SchemaCache,
      LlmProvider,
    ],
  },
];
