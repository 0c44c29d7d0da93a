import { Logger, type Provider } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { PromptRegistry } from '../../mcp/prompt-registry';
import { CancellationBus } from '../../ports/cancellation-bus';
import { InMemoryCancellationBus } from '../../ports/in-memory-cancellation-bus';
import { InMemorySessionStore } from '../../ports/in-memory-session-store';
import { SessionStore } from '../../ports/session-store';
import { EventStore } from '../../ports/event-store';
import { InMemoryEventStore } from '../../ports/in-memory-event-store';
import { RedisEventStore } from '../../redis/redis-event-store';
import { RedisCancellationBus } from '../../redis/redis-cancellation-bus';
import { RedisConnection } from '../../redis/redis-connection';
import { RedisListChangedRelay } from '../../redis/redis-list-changed-relay';
import { RedisSessionStore } from '../../redis/redis-session-store';
import { ToolRegistry } from '../../tools/tool-registry';
import type { ResolvedMcpEndpointOptions } from '../../transport/http/mcp-endpoint-options';
import { PARSE_AGENT_REDIS } from '../parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../parse-agent-options.interface';

/** Log context of the Redis-backed stores. */
export const REDIS_LOG_CONTEXT = 'ParseAgentRedis';

/** Internal token: the tool and prompt list changes the endpoint's streams hear. */
export const MCP_LIST_CHANGES = Symbol('parse-agent:mcp-list-changes');

export interface McpListChanges {
  tools$: Observable<unknown>;
  prompts$: Observable<unknown>;
}

/**
 * The module's Redis connection (null without the `redis` option). Boot waits briefly for Redis; if
 * it is down the app still starts, and the Redis stores refuse (fail closed) until it returns.
 */
export const redisConnectionProvider: Provider = {
  provide: PARSE_AGENT_REDIS,
  useFactory: async (options: ParseAgentModuleOptions): Promise<RedisConnection | null> => {
    if (!options.redis) return null;
    const connection = RedisConnection.fromOptions(options.redis);
    if (!(await connection.waitReady(2000))) {
      new Logger(REDIS_LOG_CONTEXT).warn(
        `Redis is not reachable yet (connection ${connection.client.status}); rate-limited calls and sessions are refused until it is.`,
      );
    }
    return connection;
  },
  inject: [PARSE_AGENT_MODULE_OPTIONS],
};

/** Endpoint stores: Redis-backed when the module has a Redis connection, in-memory otherwise. */
export function mcpStoreProviders(endpointOptionsToken: symbol): Provider[] {
  return [
    {
      provide: SessionStore,
      useFactory: async (
        o: ResolvedMcpEndpointOptions,
        redis: RedisConnection | null,
      ): Promise<SessionStore> => {
        if (!redis) {
          return new InMemorySessionStore(o.sessionIdleTimeoutMs, o.maxSessions, undefined, {
            maxPerOwner: o.maxSessionsPerPrincipal,
          });
        }
        const store = new RedisSessionStore(redis, {
          idleTimeoutMs: o.sessionIdleTimeoutMs,
          maxSessionsPerPrincipal: o.maxSessionsPerPrincipal,
          logger: new Logger(REDIS_LOG_CONTEXT),
        });
        await store.start();
        return store;
      },
      inject: [endpointOptionsToken, PARSE_AGENT_REDIS],
    },
    {
      provide: CancellationBus,
      useFactory: async (redis: RedisConnection | null): Promise<CancellationBus> => {
        if (!redis) return new InMemoryCancellationBus();
        const bus = new RedisCancellationBus(redis);
        await bus.start();
        return bus;
      },
      inject: [PARSE_AGENT_REDIS],
    },
    {
      // null when the endpoint is not resumable.
      provide: EventStore,
      useFactory: (o: ResolvedMcpEndpointOptions, redis: RedisConnection | null) => {
        if (o.resumable === false) return null;
        if (o.resumable !== true) return o.resumable;
        const retention = { retentionMs: o.eventRetentionMs };
        return redis ? new RedisEventStore(redis, retention) : new InMemoryEventStore(retention);
      },
      inject: [endpointOptionsToken, PARSE_AGENT_REDIS],
    },
    {
      provide: MCP_LIST_CHANGES,
      useFactory: async (
        redis: RedisConnection | null,
        tools: ToolRegistry,
        prompts: PromptRegistry,
      ): Promise<McpListChanges> => {
        if (!redis) return { tools$: tools.changes$, prompts$: prompts.changes$ };
        const relay = new RedisListChangedRelay(redis);
        await relay.start();
        return {
          tools$: relay.relay('tools', tools.changes$),
          prompts$: relay.relay('prompts', prompts.changes$),
        };
      },
      inject: [PARSE_AGENT_REDIS, ToolRegistry, PromptRegistry],
    },
  ];
}
