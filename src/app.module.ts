import { Logger, Module, type DynamicModule } from '@nestjs/common';
import {
  AgentUnauthorizedError,
  isLlmConfigured,
  KeyedSlidingWindowRateLimiter,
  ParseAgentAuthGuard,
  ParseAgentConsoleModule,
  ParseAgentModule,
  type LlmProvider,
  type LlmProviderOptions,
} from 'nestjs-parse-agent';
import { agentOptionsFor, DEMO_TENANT_SOURCE } from './auth/demo-principal';
import { activityActor } from './audit/activity-actor';
import { ChatController } from './chat/chat.controller';
import type { DemoSettings } from './config/demo-config';
import { CORE_MODELS } from './demo/models';
import { ToolCallAuditService } from './audit/tool-call-audit.service';
import { HealthController } from './health/health.controller';
import { DEMO_PARSE_CONNECTION, ReadinessService } from './health/readiness.service';
import { SupportModule } from './support/support.module';

export interface DemoRuntime {
  settings: DemoSettings;
  /** Where the demo reaches Parse Server (embedded: the in-process mount). */
  parseServerURL: string;
  /** The operator key accepted in `X-MCP-API-Key`. */
  mcpApiKey: string;
  /**
   * The Parse app's PostgreSQL database (embedded: the demo's own). When set, the direct
   * PostgreSQL path serves analytics and aclUser/aclRole agents with ACL, CLP and protectedFields.
   */
  postgresURI?: string;
  /** The language model behind /chat; default LLM_PROVIDER and friends from the environment. */
  llm?: LlmProvider | LlmProviderOptions;
}

export const DEMO_RUNTIME = Symbol('DEMO_RUNTIME');

/** The demo application: what a user of nestjs-parse-agent would write in their own app. */
@Module({})
export class AppModule {
  static forRoot(runtime: DemoRuntime): DynamicModule {
    const { settings } = runtime;
    const parse = {
      serverURL: runtime.parseServerURL,
      appId: settings.appId,
      masterKey: settings.masterKey,
      javascriptKey: settings.mode === 'external' ? settings.javascriptKey : undefined,
    };
    const refusals = new Logger('DemoAuth');
    // /chat exists only when a language model is configured.
    const chat = Boolean(runtime.llm) || isLlmConfigured();
    return {
      module: AppModule,
      imports: [
        ParseAgentModule.forRoot({
          parse,
          ...(runtime.postgresURI ? { postgres: { uri: runtime.postgresURI } } : {}),
          models: CORE_MODELS,
          // Fail closed: a class reaches agents only once a model declares it (the boot log lists
          // the server's other classes).
          unregisteredClasses: 'hidden',
          defaults: { permissions: 'readonly' },
          // Prints gaps between the models and the server's schemas at startup.
          auditMetadataOnBoot: true,
          // Per caller (user or operator): MCP_RATE_LIMIT tool calls per minute, default 60.
          rateLimiter: new KeyedSlidingWindowRateLimiter(settings.rateLimitPerMinute, 60),
          llm: runtime.llm,
          // What ParseAgentAuthGuard checks: a bearer Parse session (the tenant from the user's
          // `<slug>-staff` role), else the operator key in X-MCP-API-Key.
          auth: { apiKey: runtime.mcpApiKey, tenant: DEMO_TENANT_SOURCE },
          // The guard has identified the caller; map them to an agent. The library answers a
          // refusal with the fixed 401 and logs no reason, so the demo logs why here.
          agentFactory: (request) => {
            try {
              return agentOptionsFor(request);
            } catch (error) {
              if (error instanceof AgentUnauthorizedError) refusals.warn(error.message);
              throw error;
            }
          },
          mcp: {
            path: '/mcp',
            guards: [ParseAgentAuthGuard],
            maxConcurrentStreams: 200,
            // Before authentication: at most 600 requests a minute per client IP, so unauthenticated
            // floods (bodies to parse, tokens to verify with Parse) stay bounded.
            preAuthRateLimiter: new KeyedSlidingWindowRateLimiter(600, 60),
            maxSessionsPerPrincipal: 32,
            shutdownGracePeriodMs: settings.shutdownGraceMs,
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
      ],
      controllers: [HealthController, ...(chat ? [ChatController] : [])],
      providers: [
        { provide: DEMO_RUNTIME, useValue: runtime },
        { provide: DEMO_PARSE_CONNECTION, useValue: parse },
        ReadinessService,
        ToolCallAuditService,
      ],
    };
  }
}
