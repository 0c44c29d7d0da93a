import { Module, type DynamicModule } from '@nestjs/common';
import {
  KeyedSlidingWindowRateLimiter,
  ParseAgentModule,
  ParseRestClient,
} from 'nestjs-parse-agent';
import { DemoAuthGuard } from './auth/demo-auth.guard';
import { agentOptionsFor, type DemoRequest } from './auth/demo-principal';
import { SessionVerifier } from './auth/session-verifier';
import type { DemoSettings } from './config/demo-config';
import { CORE_MODELS } from './demo/models';
import { ToolCallAuditService } from './audit/tool-call-audit.service';
import { HealthController } from './health/health.controller';
import { DEMO_PARSE_CLIENT, ReadinessService } from './health/readiness.service';
import { SupportModule } from './support/support.module';

export interface DemoRuntime {
  settings: DemoSettings;
  /** Where the demo reaches Parse Server (embedded: the in-process mount). */
  parseServerURL: string;
  /** The operator key accepted in `X-MCP-API-Key`. */
  mcpApiKey: string;
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
    const parseClient = new ParseRestClient(parse);
    const guard = new DemoAuthGuard(new SessionVerifier(parseClient), runtime.mcpApiKey);
    return {
      module: AppModule,
      imports: [
        ParseAgentModule.forRoot({
          parse,
          models: CORE_MODELS,
          defaults: { permissions: 'readonly' },
          // Per caller (user or operator): MCP_RATE_LIMIT tool calls per minute, default 60.
          rateLimiter: new KeyedSlidingWindowRateLimiter(settings.rateLimitPerMinute, 60),
          // The demo guard has identified the caller; map them to an agent.
          agentFactory: (request) => agentOptionsFor(request as unknown as DemoRequest),
          mcp: {
            path: '/mcp',
            guards: [guard],
            maxConcurrentStreams: 200,
            shutdownGracePeriodMs: settings.shutdownGraceMs,
          },
        }),
        SupportModule,
      ],
      controllers: [HealthController],
      providers: [
        { provide: DEMO_RUNTIME, useValue: runtime },
        { provide: DEMO_PARSE_CLIENT, useValue: parseClient },
        ReadinessService,
        ToolCallAuditService,
      ],
    };
  }
}
