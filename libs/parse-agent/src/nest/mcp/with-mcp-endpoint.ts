import { Logger, type DynamicModule, type Provider } from '@nestjs/common';
import { ExternalContextCreator, HttpAdapterHost } from '@nestjs/core';
import { take } from 'rxjs';
import { McpDispatcher } from '../../mcp/mcp-dispatcher';
import { PromptRegistry } from '../../mcp/prompt-registry';
import { ToolRegistry } from '../../tools/tool-registry';
import type { ParseAgentFactory } from '../parse-agent.factory';
import type { ParseAgentModuleOptions } from '../parse-agent-options.interface';
import { createMcpController } from './mcp.controller';
import {
  resolveMcpEndpointOptions,
  type McpEndpointOptions,
  type ResolvedMcpEndpointOptions,
} from './mcp-endpoint-options';
import {
  MCP_AGENT_FACTORY,
  MCP_ENDPOINT_OPTIONS,
  MCP_LOG_CONTEXT,
  MCP_MODULE_OPTIONS,
} from './mcp-http.constants';
import { McpHttpHandler } from './mcp-http.handler';
import { McpRequestGate } from './mcp-request-gate';
import { McpSessionRegistry } from './mcp-session-registry';

/**
 * Adds the MCP endpoint (controller, handler, transport gate, sessions) to the module definition
 * when the `mcp` extra is present. Called by the ConfigurableModuleBuilder extras transform.
 *
 * The module options and ParseAgentFactory are injected through aliases (MCP_MODULE_OPTIONS,
 * MCP_AGENT_FACTORY) because the module definition imports this file.
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
      provide: McpSessionRegistry,
      useFactory: (o: ResolvedMcpEndpointOptions) =>
        new McpSessionRegistry(o.sessionIdleTimeoutMs, o.maxSessions),
      inject: [MCP_ENDPOINT_OPTIONS],
    },
    {
      provide: McpRequestGate,
      useFactory: (
        o: ResolvedMcpEndpointOptions,
        adapterHost: HttpAdapterHost,
        contexts: ExternalContextCreator,
      ) => {
        const logger = new Logger(MCP_LOG_CONTEXT);
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
        sessions: McpSessionRegistry,
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
          logger: new Logger(MCP_LOG_CONTEXT),
        }),
      inject: [
        MCP_ENDPOINT_OPTIONS,
        MCP_MODULE_OPTIONS,
        MCP_AGENT_FACTORY,
        McpDispatcher,
        ToolRegistry,
        PromptRegistry,
        McpRequestGate,
        McpSessionRegistry,
      ],
    },
  ];
  return {
    ...definition,
    controllers: [...(definition.controllers ?? []), createMcpController(options)],
    providers: [...(definition.providers ?? []), ...providers],
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
