import { ParseAgentLibraryModule } from './parse-agent-library.marker';
import {
  Inject,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Subscription } from 'rxjs';
import { formatMetadataAudit } from '../metadata/metadata-audit';
import type { ParseAgentModuleOptions } from '../composition/parse-agent-options.interface';
import { DiscoveryModule } from '@nestjs/core';
import { AgentEvents } from '../core/agent-events';
import { DataRouter } from '../data/data-router';
import { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import { SchemaCache } from '../data/schema-cache';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { PromptRegistry } from '../mcp/prompt-registry';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { LlmProvider } from '../ports/llm-provider';
import { EmbeddingProvider } from '../ports/embedding-provider';
import { SearchIndexer } from '../retrieval/search-indexer';
import { SearchIndexVerifier } from './search-index-verifier';
import { RateLimiter } from '../ports/rate-limiter';
import { ToolRegistry } from '../tools/tool-registry';
import { AgentToolExplorer } from './agent-tool.explorer';
import type { RedisConnection } from '../redis/redis-connection';
import {
  PARSE_AGENT_COMPOSITION,
  PARSE_AGENT_REDIS,
  PARSE_AGENT_SERVICES,
} from './parse-agent.constants';
import type { AgentComposition } from '../composition/compose-agent-services';
import { ParseAgentFactory } from './parse-agent.factory';
import {
  ConfigurableModuleClass,
  PARSE_AGENT_MODULE_OPTIONS,
} from './parse-agent.module-definition';
import { parseAgentProviders } from './parse-agent.providers';
import { ParseAgentStartupCheck } from './parse-agent-startup-check';
import { parseAgentAuthProviders } from './auth/parse-agent-auth.providers';
import { ParseSessionVerifier } from '../auth/session-verifier';
import { warnUnconfirmedWrites } from '../agent/unconfirmed-writes';
import { warnUnscopedClasses } from '../metadata/unscoped-classes';
import { UnexposedClassesReporter } from './unexposed-classes.reporter';
import { DeclaredNamesReporter } from './declared-names.reporter';
import { LiveQueryHost, liveQueryProvider, mcpNotifierProvider } from './live-query.host';
import { McpNotifier } from '../mcp/mcp-notifier';

/** The configured module behind ParseAgentModule.forRoot / forRootAsync (global by default). */
@ParseAgentLibraryModule()
@Module({
  imports: [DiscoveryModule],
  providers: [
    ...parseAgentProviders,
    ...parseAgentAuthProviders,
    ParseAgentFactory,
    AgentToolExplorer,
    ParseAgentStartupCheck,
    UnexposedClassesReporter,
    DeclaredNamesReporter,
    SearchIndexVerifier,
    liveQueryProvider,
    mcpNotifierProvider,
    LiveQueryHost,
  ],
  exports: [
    ParseAgentFactory,
    MetadataRegistry,
    ToolRegistry,
    PromptRegistry,
    McpDispatcher,
    McpNotifier,
    AgentEvents,
    ParseRestClient,
    SchemaCache,
    DataRouter,
    RateLimiter,
    LlmProvider,
    EmbeddingProvider,
    SearchIndexer,
    PARSE_AGENT_SERVICES,
    PARSE_AGENT_MODULE_OPTIONS,
    ParseAgentStartupCheck,
    ParseSessionVerifier,
  ],
})
export class ParseAgentCoreModule
  extends ConfigurableModuleClass
  implements OnApplicationBootstrap, OnApplicationShutdown
{
  protected readonly logger = new Logger('ParseAgent');
  protected mutationLog?: Subscription;
  protected closed = false;

  constructor(
    @Inject(PARSE_AGENT_COMPOSITION) protected readonly composition: AgentComposition,
    protected readonly events: AgentEvents,
    protected readonly factory: ParseAgentFactory,
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly options: ParseAgentModuleOptions,
    @Inject(PARSE_AGENT_REDIS) protected readonly redis: RedisConnection | null,
    protected readonly startupCheck: ParseAgentStartupCheck,
  ) {
    super();
    // Every change an agent makes is logged (field names, never values).
    this.mutationLog = events.mutations$.subscribe((e) =>
      this.logger.log(
        `mutation ${e.action}${e.method ? ` ${e.method}` : ''} ${e.class_name}${e.object_id ? `#${e.object_id}` : ''} keys=[${e.changed_keys.join(',')}] by ${e.auth_type}${e.tenant_id ? ` tenant=${e.tenant_id}` : ''} agent=${e.agent_id}${e.confirmed ? ' confirmed' : ''}${e.failed ? ' (method failed after writing)' : ''}`,
      ),
    );
  }

  /** Metadata audit promise (tests await it). */
  audit?: Promise<void>;

  onApplicationBootstrap(): void {
    // Every model is registered by now, forFeature ones included.
    warnUnscopedClasses(this.composition.metadata);
    warnUnconfirmedWrites(this.options?.defaults);
    if (!this.options?.auditMetadataOnBoot) return;
    // After Parse Server answered: one that is not listening yet (mounted by this same app) is no
    // reason to skip the audit or to warn; one that never answers is reported by the start-up check.
    this.audit = this.startupCheck.parseAnswered().then(async (answered) => {
      if (!answered) return;
      try {
        this.logger.log(formatMetadataAudit(await this.factory.auditMetadata()));
      } catch (error) {
        if (!this.closed) this.logger.warn(`metadata audit skipped: ${(error as Error).message}`);
      }
    });
  }

  /** Releases the keep-alive sockets to Parse Server and the clients this library opened. */
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.mutationLog?.unsubscribe();
    // An application's own pool, client and data path providers stay open.
    await this.composition.close();
    await this.redis?.close();
  }
}
