import { Module, type DynamicModule } from '@nestjs/common';
import {
  isLlmConfigured,
  ParseAgentModule,
  ParseRestClient,
  type LlmProvider,
  type LlmProviderOptions,
} from 'nestjs-parse-agent';
import { DEMO_API_KEY, DemoAuthGuard } from './auth/demo-auth.guard';
import { agentOptionsFor, type DemoRequest } from './auth/demo-principal';
import { SessionVerifier } from './auth/session-verifier';
import { ChatController } from './chat/chat.controller';
import type { DemoSettings } from './config/demo-config';
import { CORE_MODELS } from './demo/models';
import { ToolCallAuditService } from './audit/tool-call-audit.service';
import { HealthController } from './health.controller';
import { SupportModule } from './support/support.module';

export interface DemoRuntime {
  settings: DemoSettings;
  /** Where the demo reaches Parse Server (embedded: the in-process mount). */
  parseServerURL: string;
  /** The operator key accepted in `X-MCP-API-Key`. */
  mcpApiKey: string;
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
    const sessions = new SessionVerifier(new ParseRestClient(parse));
    const guard = new DemoAuthGuard(sessions, runtime.mcpApiKey);
    // /chat exists only when a language model is configured.
    const chat = Boolean(runtime.llm) || isLlmConfigured();
    return {
      module: AppModule,
      imports: [
        ParseAgentModule.forRoot({
          parse,
          models: CORE_MODELS,
          defaults: { permissions: 'readonly' },
          llm: runtime.llm,
          // The demo guard has identified the caller; map them to an agent.
          agentFactory: (request) => agentOptionsFor(request as unknown as DemoRequest),
          mcp: { path: '/mcp', guards: [guard], maxConcurrentStreams: 200 },
        }),
        SupportModule,
      ],
      controllers: [HealthController, ...(chat ? [ChatController] : [])],
      providers: [
        { provide: DEMO_RUNTIME, useValue: runtime },
        ToolCallAuditService,
        { provide: SessionVerifier, useValue: sessions },
        { provide: DEMO_API_KEY, useValue: runtime.mcpApiKey },
      ],
    };
  }
}
