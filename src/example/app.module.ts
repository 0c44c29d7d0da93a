import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import {
  AgentUnauthorizedError,
  LocalLexicalEmbedder,
  ParseAgentAuthGuard,
  ParseAgentConsoleModule,
  ParseAgentModule,
  type ParseAgentModuleOptions,
} from 'nestjs-parse-agent';
import { isLlmConfigured } from 'nestjs-parse-agent/llm';
import { KeyedSlidingWindowRateLimiter } from 'nestjs-parse-agent/stores';
import { activityActor } from './audit/activity-actor';
import { ToolCallAuditService } from './audit/tool-call-audit.service';
import { agentOptionsFor, DEMO_TENANT_SOURCE } from './auth/agent-factory';
import { ChatController } from './chat/chat.controller';
import {
  EXAMPLE_CONFIG,
  exampleConfig,
  type ExampleConfig,
  type ExampleRuntime,
} from './config/example.config';
import { HealthController } from './health/health.controller';
import { DEMO_PARSE_CONNECTION, ReadinessService } from './health/readiness.service';
import { CORE_MODELS } from './models';
import { SupportModule } from './support/support.module';
import { ReportsModule } from './tools/reports.module';

/**
 * The parse-agent options the example builds from its settings: what a user of nestjs-parse-agent
 * writes in `forRootAsync`'s `useFactory`.
 */
export function parseAgentOptions(config: ExampleConfig): ParseAgentModuleOptions {
  const refusals = new Logger('DemoAuth');
  return {
    parse: config.parse,
    // The direct path, and semantic_search with the in-process lexical embedder (vectors in a side
    // table of Parse's database; docs/retrieval.md shows switching to OpenAI or Ollama).
    ...(config.postgresURI
      ? { postgres: { uri: config.postgresURI }, embeddings: new LocalLexicalEmbedder() }
      : {}),
    // resources/subscribe for the classes the host's Parse Server publishes on LiveQuery.
    ...(config.liveQuery ? { liveQuery: config.liveQuery } : {}),
    models: CORE_MODELS,
    // Fail closed: a class reaches agents only once a model declares it (the boot log lists the
    // server's other classes).
    unregisteredClasses: 'hidden',
    defaults: { permissions: 'readonly' },
    // Prints gaps between the models and the server's schemas at startup.
    auditMetadataOnBoot: true,
    // Per caller (user or operator): MCP_RATE_LIMIT tool calls per minute, default 60.
    rateLimiter: new KeyedSlidingWindowRateLimiter(config.rateLimitPerMinute, 60),
    llm: config.llm,
    // What ParseAgentAuthGuard checks: a bearer Parse session (the tenant from the user's
    // `<slug>-staff` role), else the operator key in X-MCP-API-Key.
    auth: { apiKey: config.mcpApiKey, tenant: DEMO_TENANT_SOURCE },
    // The guard has identified the caller; map them to an agent. The library answers a refusal
    // with the fixed 401 and logs no reason, so the demo logs why here.
    agentFactory: (request) => {
      try {
        return agentOptionsFor(request);
      } catch (error) {
        if (error instanceof AgentUnauthorizedError) refusals.warn(error.message);
        throw error;
      }
    },
  };
}

/**
 * The example application: what a user of nestjs-parse-agent would write in their own app. Its
 * settings come from ConfigService; `runtime` is what the host worked out at start-up.
 */
@Module({})
export class AppModule {
  static forRoot(runtime: ExampleRuntime): DynamicModule {
    // /chat exists only when a language model is configured.
    const chat = Boolean(runtime.llm) || isLlmConfigured();
    const fromConfig = (config: ConfigService) => config.getOrThrow<ExampleConfig>(EXAMPLE_CONFIG);
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ ignoreEnvFile: true, load: [exampleConfig(runtime)] }),
        ParseAgentModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => parseAgentOptions(fromConfig(config)),
          // The endpoint's shape is synchronous (it decides which routes exist).
          mcp: {
            path: '/mcp',
            guards: [ParseAgentAuthGuard],
            maxConcurrentStreams: 200,
            // Before authentication: at most 600 requests a minute per client IP, so
            // unauthenticated floods (bodies to parse, tokens to verify with Parse) stay bounded.
            preAuthRateLimiter: new KeyedSlidingWindowRateLimiter(600, 60),
            maxSessionsPerPrincipal: 32,
            shutdownGracePeriodMs: runtime.settings.shutdownGraceMs,
          },
        }),
        // The browser console at /console: the same guard and agentFactory as /mcp, so it shows
        // and runs exactly what an MCP client with those credentials gets. Only the operator key
        // opens its activity feed.
        ParseAgentConsoleModule.forRoot({
          path: '/console',
          guards: [ParseAgentAuthGuard],
          actorOf: activityActor,
          // Sign-in goes to Parse's /login: at most 20 attempts a minute per client address.
          signInRateLimiter: new KeyedSlidingWindowRateLimiter(20, 60),
        }),
        SupportModule,
        ReportsModule,
      ],
      controllers: [HealthController, ...(chat ? [ChatController] : [])],
      providers: [
        {
          provide: DEMO_PARSE_CONNECTION,
          useFactory: (config: ConfigService) => fromConfig(config).parse,
          inject: [ConfigService],
        },
        ReadinessService,
        ToolCallAuditService,
      ],
    };
  }
}
