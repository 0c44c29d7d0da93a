import type { Server } from 'node:http';
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
import { RateLimitedLogger } from '../../transport/shared/rate-limited-logger';
import type { McpTransport, McpTransportContext } from '../../transport/shared/mcp-transport';
import { createTransportContext } from '../../transport/shared/transport-context';
import {
  MCP_ENDPOINT_OPTIONS,
  MCP_TRANSPORT_CONTEXT,
  MCP_TRANSPORTS,
} from '../parse-agent.constants';
import { ParseAgentFactory } from '../parse-agent.factory';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../../composition/parse-agent-options.interface';
import { MCP_INITIALIZE_LIMITER, mcpStoreProviders } from '../redis/redis.providers';
import { ParseRestClient } from '../../data/parse-rest/parse-rest-client';
import type { RateLimiter } from '../../ports/rate-limiter';
import { principalUserKey } from '../../auth/principal-user-key';
import { createMcpController } from './mcp.controller';
import { installMcpGate } from './mcp-platform';
import { extraTransports, McpTransportHost } from './mcp-transport-host';
import type { McpEndpointOptions, ResolvedMcpEndpointOptions } from './mcp-endpoint-options';

/**
 * Adds the MCP endpoint (controller, handler, transport gate, session store, cancellation bus) to
 * the module definition when the `mcp` extra is present. The stores are the application's when it
 * passes them (`sessionStore`, `cancellationBus`, `eventStore`), else Redis-backed with the `redis`
 * option, else in-memory.
 */
export function withMcpEndpoint(
  definition: DynamicModule,
  mcp: McpEndpointOptions | undefined,
): DynamicModule {
  if (mcp === undefined || mcp === null) return definition;
  const options = resolveMcpEndpointOptions(mcp);
  const transports = extraTransports(mcp.transports);
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
        adapterHost.init$
          .pipe(take(1))
          .subscribe(() => installMcpGate(adapterHost.httpAdapter, gate, logger));
        return gate;
      },
      inject: [MCP_ENDPOINT_OPTIONS, HttpAdapterHost, ExternalContextCreator],
    },
    {
      provide: McpHttpHandler,
      useFactory: (
        o: ResolvedMcpEndpointOptions,
        moduleOptions: ParseAgentModuleOptions,
        gate: McpRequestGate,
        events: EventStore | null,
        initializeLimiter: RateLimiter | null,
        adapterHost: HttpAdapterHost,
      ) =>
        new McpHttpHandler({
          // The shipped guards already know the user: no second /users/me to count sessions.
          options: { ...o, userKey: withPrincipalUserKey(o.userKey) },
          agentFactory: moduleOptions.agentFactory?.bind(moduleOptions),
          gate,
          events: events ?? undefined,
          initializeLimiter: initializeLimiter ?? undefined,
          httpServer: () => adapterHost.httpAdapter?.getHttpServer?.() as Server | undefined,
        }),
      inject: [
        MCP_ENDPOINT_OPTIONS,
        PARSE_AGENT_MODULE_OPTIONS,
        McpRequestGate,
        EventStore,
        MCP_INITIALIZE_LIMITER,
        HttpAdapterHost,
      ],
    },
    {
      // What every transport of the module runs on: the module's agents, stores and limits.
      provide: MCP_TRANSPORT_CONTEXT,
      useFactory: (
        o: ResolvedMcpEndpointOptions,
        agents: ParseAgentFactory,
        dispatcher: McpDispatcher,
        sessions: SessionStore,
        cancellations: CancellationBus,
        parse: ParseRestClient,
      ): McpTransportContext =>
        createTransportContext({
          dispatcher,
          agents,
          sessions,
          cancellations,
          sessionUser: async (sessionToken) =>
            (
              await parse.request<{ objectId?: string }>('GET', '/users/me', undefined, {
                sessionToken,
              })
            ).objectId ?? '',
          limits: { maxMessageBytes: o.maxBodyBytes, maxJsonDepth: o.maxJsonDepth },
          logger: new RateLimitedLogger(new Logger(MCP_LOG_CONTEXT)),
        }),
      inject: [
        MCP_ENDPOINT_OPTIONS,
        ParseAgentFactory,
        McpDispatcher,
        SessionStore,
        CancellationBus,
        ParseRestClient,
      ],
    },
    {
      // Streamable HTTP first, then the application's own (`mcp.transports`).
      provide: MCP_TRANSPORTS,
      useFactory: (http: McpHttpHandler): McpTransport[] => [http, ...transports],
      inject: [McpHttpHandler],
    },
    McpTransportHost,
  ];
  return {
    ...definition,
    controllers: [...(definition.controllers ?? []), createMcpController(options)],
    providers: [...(definition.providers ?? []), ...providers],
    // The endpoint's options: the console takes its pre-auth limiter from them.
    exports: [...(definition.exports ?? []), SessionStore, CancellationBus, MCP_ENDPOINT_OPTIONS],
  };
}

/** The host's `mcp.userKey` first, then the user the shipped guards put on the request. */
function withPrincipalUserKey(
  own: ResolvedMcpEndpointOptions['userKey'],
): NonNullable<ResolvedMcpEndpointOptions['userKey']> {
  return async (request, agent) =>
    (await own?.(request, agent)) ?? principalUserKey(request, agent);
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
