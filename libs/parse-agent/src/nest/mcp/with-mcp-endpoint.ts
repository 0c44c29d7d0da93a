import { Logger, type DynamicModule, type Provider } from '@nestjs/common';
import { ExternalContextCreator, HttpAdapterHost } from '@nestjs/core';
import { take } from 'rxjs';
import { McpDispatcher } from '../../mcp/mcp-dispatcher';
import { CancellationBus } from '../../ports/cancellation-bus';
import { SessionStore } from '../../ports/session-store';
import { EventStore } from '../../ports/event-store';
import { resolveMcpEndpointOptions } from '../../transport/http/mcp-endpoint-options';
import { MCP_LOG_CONTEXT } from '../../transport/http/mcp-http.constants';
import { McpHttpHandler } from '../../transport/http/mcp-http.handler';
import { McpRequestGate } from '../../transport/http/mcp-request-gate';
import { RateLimitedLogger } from '../../transport/http/rate-limited-logger';
import { MCP_ENDPOINT_OPTIONS } from '../parse-agent.constants';
import { ParseAgentFactory } from '../parse-agent.factory';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../parse-agent-options.interface';
import { MCP_LIST_CHANGES, mcpStoreProviders, type McpListChanges } from '../redis/redis.providers';
import { createMcpController } from './mcp.controller';
import type { McpEndpointOptions, ResolvedMcpEndpointOptions } from './mcp-endpoint-options';

/**
 * Adds the MCP endpoint (controller, handler, transport gate, session store, cancellation bus) to
 * the module definition when the `mcp` extra is present. The session store and cancellation bus
 * are Redis-backed with the `redis` option, in-memory otherwise; an application can provide its own
 * under the port tokens.
 */
export function withMcpEndpoint(
  definition: DynamicModule,
  mcp: McpEndpointOptions | undefined,
): DynamicModule {
  if (mcp === undefined || mcp === null) return definition;
  const options = resolveMcpEndpointOptions(mcp);
  const providers: Provider[] = [
    { provide: MCP_ENDPOINT_OPTIONS, useValue: options },
    ...mcpStoreProviders(MCP_ENDPOINT_OPTIONS),
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
        changes: McpListChanges,
        gate: McpRequestGate,
        sessions: SessionStore,
        cancellations: CancellationBus,
        events: EventStore | null,
      ) =>
        new McpHttpHandler({
          options: o,
          agentFactory: moduleOptions.agentFactory?.bind(moduleOptions),
          agents,
          dispatcher,
          toolChanges$: changes.tools$,
          promptChanges$: changes.prompts$,
          gate,
          sessions,
          cancellations,
          events: events ?? undefined,
          logger: new RateLimitedLogger(new Logger(MCP_LOG_CONTEXT)),
        }),
      inject: [
        MCP_ENDPOINT_OPTIONS,
        PARSE_AGENT_MODULE_OPTIONS,
        ParseAgentFactory,
        McpDispatcher,
        MCP_LIST_CHANGES,
        McpRequestGate,
        SessionStore,
        CancellationBus,
        EventStore,
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
