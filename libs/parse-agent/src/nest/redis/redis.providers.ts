import { Logger, type Provider } from '@nestjs/common';
import type { Observable } from 'rxjs';
import {
  createCancellationBus,
  createEventStore,
  createSessionStore,
} from '../../composition/mcp-endpoint-stores';
import { PromptRegistry } from '../../mcp/prompt-registry';
import { CancellationBus } from '../../ports/cancellation-bus';
import { SessionStore } from '../../ports/session-store';
import { EventStore } from '../../ports/event-store';
import { RedisConnection, validateRedisOptions } from '../../redis/redis-connection';
import { RedisListChangedRelay } from '../../redis/redis-list-changed-relay';
import { RedisRateLimiter } from '../../redis/redis-rate-limiter';
import { KeyedSlidingWindowRateLimiter } from '../../ports/in-memory-rate-limiter';
import type { RateLimiter } from '../../ports/rate-limiter';
import { ToolRegistry } from '../../tools/tool-registry';
import type { ResolvedMcpEndpointOptions } from '../../transport/http/mcp-endpoint-options';
import { PARSE_AGENT_REDIS } from '../parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../../composition/parse-agent-options.interface';

/** Log context of the Redis-backed stores. */
export const REDIS_LOG_CONTEXT = 'ParseAgentRedis';

/** Internal token: the limiter of `initialize` requests per user (null when turned off). */
export const MCP_INITIALIZE_LIMITER = Symbol('parse-agent:mcp-initialize-limiter');

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
    // The option is typed without ioredis; the check narrows it to the connection's own type.
    const connection = RedisConnection.fromOptions(validateRedisOptions(options.redis));
    if (!(await connection.waitReady(2000))) {
      new Logger(REDIS_LOG_CONTEXT).warn(
        `Redis is not reachable yet (connection ${connection.client.status}); rate-limited calls and sessions are refused until it is.`,
      );
    }
    return connection;
  },
  inject: [PARSE_AGENT_MODULE_OPTIONS],
};

/**
 * Endpoint stores: the application's when the module options name one (`sessionStore`,
 * `cancellationBus`, `eventStore`), else Redis-backed when the module has a Redis connection,
 * in-memory otherwise. The choice is the composition root's; these providers only inject.
 */
export function mcpStoreProviders(endpointOptionsToken: symbol): Provider[] {
  const context = (redis: RedisConnection | null) => ({
    redis,
    logger: new Logger(REDIS_LOG_CONTEXT),
    optionsName: 'ParseAgentModule.forRoot',
  });
  return [
    {
      provide: SessionStore,
      useFactory: (
        o: ResolvedMcpEndpointOptions,
        options: ParseAgentModuleOptions,
        redis: RedisConnection | null,
      ): Promise<SessionStore> => createSessionStore(o, options.sessionStore, context(redis)),
      inject: [endpointOptionsToken, PARSE_AGENT_MODULE_OPTIONS, PARSE_AGENT_REDIS],
    },
    {
      // null with `initializeRateLimit: false`; shared by every node with the redis option.
      provide: MCP_INITIALIZE_LIMITER,
      useFactory: (
        o: ResolvedMcpEndpointOptions,
        redis: RedisConnection | null,
      ): RateLimiter | null => {
        if (o.initializeRateLimit === false) return null;
        const { limit, windowSeconds: window } = o.initializeRateLimit;
        return redis
          ? new RedisRateLimiter(redis, { limit, window, logger: new Logger(REDIS_LOG_CONTEXT) })
          : new KeyedSlidingWindowRateLimiter(limit, window);
      },
      inject: [endpointOptionsToken, PARSE_AGENT_REDIS],
    },
    {
      provide: CancellationBus,
      useFactory: (
        options: ParseAgentModuleOptions,
        redis: RedisConnection | null,
      ): Promise<CancellationBus> => createCancellationBus(options.cancellationBus, context(redis)),
      inject: [PARSE_AGENT_MODULE_OPTIONS, PARSE_AGENT_REDIS],
    },
    {
      // null when the endpoint is not resumable.
      provide: EventStore,
      useFactory: (
        o: ResolvedMcpEndpointOptions,
        options: ParseAgentModuleOptions,
        redis: RedisConnection | null,
      ): EventStore | null => createEventStore(o, options.eventStore, context(redis)),
      inject: [endpointOptionsToken, PARSE_AGENT_MODULE_OPTIONS, PARSE_AGENT_REDIS],
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
