import type { Provider } from '@nestjs/common';
import { AgentEvents } from '../core/agent-events';
import type { AgentServices } from '../core/parse-agent';
import { KeyedSlidingWindowRateLimiter, type RateLimiter } from '../core/rate-limiter';
import { suppressSecurityBanners } from '../core/security-banner';
import { ParseRestClient } from '../data/parse-rest-client';
import { SchemaCache } from '../data/schema-cache';
import { BUILTIN_PROMPTS } from '../mcp/builtin-prompts';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { PromptRegistry } from '../mcp/prompt-registry';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { BUILTIN_TOOLS } from '../tools/builtin';
import { ToolRegistry } from '../tools/tool-registry';
import { PARSE_AGENT_RATE_LIMITER } from './parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import type { ParseAgentModuleOptions } from './parse-agent-options.interface';
import { validateModuleOptions } from './validate-module-options';

/** Internal token: the shared services every agent of this module runs on. */
export const PARSE_AGENT_SERVICES = Symbol('PARSE_AGENT_SERVICES');

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
    provide: PARSE_AGENT_RATE_LIMITER,
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
    provide: PARSE_AGENT_SERVICES,
    useFactory: (
      options: ParseAgentModuleOptions,
      metadata: MetadataRegistry,
      tools: ToolRegistry,
      events: AgentEvents,
      rateLimiter: RateLimiter,
      parse: ParseRestClient,
    ): AgentServices => ({
      parse,
      schemas: new SchemaCache(parse, options.schemaCacheTtlMs ?? 30_000),
      metadata,
      tools,
      events,
      rateLimiter,
      directMongo: false,
    }),
    inject: [
      PARSE_AGENT_MODULE_OPTIONS,
      MetadataRegistry,
      ToolRegistry,
      AgentEvents,
      PARSE_AGENT_RATE_LIMITER,
      ParseRestClient,
    ],
  },
];
