import { Logger, type DynamicModule, type Provider } from '@nestjs/common';
import { ExternalContextCreator, HttpAdapterHost } from '@nestjs/core';
import { take } from 'rxjs';
import { McpDispatcher } from '../../mcp/mcp-dispatcher';
import { PromptRegistry } from '../../mcp/prompt-registry';
import { CancellationBus } from '../../ports/cancellation-bus';
import { InMemoryCancellationBus } from '../../ports/in-memory-cancellation-bus';
import { InMemorySessionStore } from '../../ports/in-memory-session-store';
import { SessionStore } from '../../ports/session-store';
import { ToolRegistry } from '../../tools/tool-registry';
import { resolveMcpEndpointOptions } from '../../transport/http/mcp-endpoint-options';
import { MCP_LOG_CONTEXT } from '../../transport/http/mcp-http.constants';
import { McpHttpHandler } from '../../transport/http/mcp-http.handler';
import { McpRequestGate } from '../../transport/http/mcp-request-gate';
import { RateLimitedLogger } from '../../transport/http/rate-limited-logger';
import { MCP_ENDPOINT_OPTIONS } from '../parse-agent.constants';
import { ParseAgentFactory } from '../parse-agent.factory';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../parse-agent-options.interface';
import { createMcpController } from './mcp.controller';
import type { McpEndpointOptions, ResolvedMcpEndpointOptions } from './mcp-endpoint-options';

/**
 * Adds the MCP endpoint (controller, handler, transport gate, session store, cancellation bus) to
 * the module definition when the `mcp` extra is present. The session store and cancellation bus
 * are the in-memory defaults unless the application provides its own under the port tokens.
 */
export function withMcpEndpoint(
  definition: DynamicModule,
  mcp: McpEndpointOptions | undefined,
): DynamicModule {
  if (mcp === undefined || mcp === null) return definition;
  const options = resolveMcpEndpointOptions(mcp);
  const providers: Provider[] = [
    { provide: MCP_ENDPOINT_OPTIONS, useValue: options },
    {
      provide: SessionStore,
      useFactory: (o: ResolvedMcpEndpointOptions) =>
        new InMemorySessionStore(o.sessionIdleTimeoutMs, o.maxSessions),
      inject: [MCP_ENDPOINT_OPTIONS],
    },
    { provide: CancellationBus, useFactory: () => new InMemoryCancellationBus() },
    {
      provide: McpRequestGate,
      useFactory: (
        o: ResolvedMcpEndpointOptions,
        adapterHost: HttpAdapterHost,
        contexts: ExternalContextCreator,
      ) => {
        const logger = new RateLimitedLogger(new Logger(MCP_LOG_CONTEXT));
        const gate = new McpRequestGate(o, logger, {
          globalPrefix: () => readGlobalPrefix(contexts),
          listeningAddress: () => adapterHost.httpAdapter?.getHttpServer?.()?.address?.(),
        });
        // Installed as soon as the HTTP adapter exists: before Nest registers its body parsers
        // (app.init), so the gate reads the raw body and refuses before any guard runs.
        adapterHost.init$.pipe(take(1)).subscribe(() => {
          const adapter = adapterHost.httpAdapter;
          if (adapter?.getType?.() === 'express') adapter.use(gate.middleware);
          else
            logger.warn(
              'The MCP transport gate supports the Express adapter only; on this adapter its checks run in the controller, after guards and body parsing.',
            );
        });
        return gate;
      },
      inject: [MCP_ENDPOINT_OPTIONS, HttpAdapterHost, ExternalContextCreator],
    },
    {
      provide: McpHttpHandler,
      useFactory: (
        o: ResolvedMcpEndpointOptions,
        moduleOptions: ParseAgentModuleOptions,
        agents: ParseAgentFactory,
        dispatcher: McpDispatcher,
        tools: ToolRegistry,
        prompts: PromptRegistry,
        gate: McpRequestGate,
        sessions: SessionStore,
        cancellations: CancellationBus,
      ) =>
        new McpHttpHandler({
          options: o,
          agentFactory: moduleOptions.agentFactory?.bind(moduleOptions),
          agents,
          dispatcher,
          toolChanges$: tools.changes$,
          promptChanges$: prompts.changes$,
          gate,
          sessions,
          cancellations,
          logger: new RateLimitedLogger(new Logger(MCP_LOG_CONTEXT)),
        }),
      inject: [
        MCP_ENDPOINT_OPTIONS,
        PARSE_AGENT_MODULE_OPTIONS,
        ParseAgentFactory,
        McpDispatcher,
        ToolRegistry,
        PromptRegistry,
        McpRequestGate,
        SessionStore,
        CancellationBus,
      ],
    },
  ];
  return {
    ...definition,
    controllers: [...(definition.controllers ?? []), createMcpController(options)],
    providers: [...(definition.providers ?? []), ...providers],
    exports: [...(definition.exports ?? []), SessionStore, CancellationBus],
  };
}

/** Nest keeps the global prefix in its ApplicationConfig, reachable through the guards' context. */
function readGlobalPrefix(contexts: ExternalContextCreator): string {
  const config = (
    contexts as unknown as {
      guardsContextCreator?: { config?: { getGlobalPrefix?: () => string } };
    }
  ).guardsContextCreator?.config;
  return config?.getGlobalPrefix?.() ?? '';
}
