import { ParseAgentConfigError } from '../core/errors';
import type { CancellationBus } from '../ports/cancellation-bus';
import type { EventStore } from '../ports/event-store';
import { InMemoryCancellationBus } from '../ports/in-memory-cancellation-bus';
import { InMemoryEventStore } from '../ports/in-memory-event-store';
import { InMemorySessionStore } from '../ports/in-memory-session-store';
import type { SessionStore } from '../ports/session-store';
import { RedisCancellationBus } from '../redis/redis-cancellation-bus';
import type { RedisConnection, RedisStoreLogger } from '../redis/redis-connection';
import { RedisEventStore } from '../redis/redis-event-store';
import { RedisSessionStore } from '../redis/redis-session-store';
import type { ResolvedMcpEndpointOptions } from '../transport/http/mcp-endpoint-options';

/**
 * The MCP endpoint's ports as an application may supply them. Each one given is used as is; each
 * one left out gets the library's default: Redis-backed with a Redis connection, in this process
 * otherwise.
 */
export interface McpEndpointPortOptions {
  sessionStore?: SessionStore;
  cancellationBus?: CancellationBus;
  eventStore?: EventStore;
}

export interface McpEndpointStoreContext {
  redis?: RedisConnection | null;
  logger?: RedisStoreLogger;
  /** Names the options in error messages (e.g. `ParseAgentModule.forRoot`). */
  optionsName: string;
}

function lacks(value: unknown, methods: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return methods.some((m) => typeof (value as Record<string, unknown>)[m] !== 'function');
}

function check(
  value: unknown,
  option: string,
  methods: readonly string[],
  what: string,
  context: McpEndpointStoreContext,
): void {
  if (value !== undefined && lacks(value, methods)) {
    throw new ParseAgentConfigError(
      `${context.optionsName}: ${option} must be ${what} (with ${methods.map((m) => `${m}()`).join(', ')}).`,
    );
  }
}

/** The application's SessionStore, else the default sized by the endpoint's session settings. */
export async function createSessionStore(
  endpoint: ResolvedMcpEndpointOptions,
  own: SessionStore | undefined,
  context: McpEndpointStoreContext,
): Promise<SessionStore> {
  check(own, 'sessionStore', ['create', 'get', 'delete', 'clear'], 'a SessionStore', context);
  if (own) return own;
  if (!context.redis) {
    return new InMemorySessionStore(
      endpoint.sessionIdleTimeoutMs,
      endpoint.maxSessions,
      undefined,
      {
        maxPerUser: endpoint.maxSessionsPerPrincipal,
      },
    );
  }
  const store = new RedisSessionStore(context.redis, {
    idleTimeoutMs: endpoint.sessionIdleTimeoutMs,
    maxSessionsPerPrincipal: endpoint.maxSessionsPerPrincipal,
    maxSessions: endpoint.maxSessions,
    logger: context.logger,
  });
  await store.start();
  return store;
}

/** The application's CancellationBus, else the default. */
export async function createCancellationBus(
  own: CancellationBus | undefined,
  context: McpEndpointStoreContext,
): Promise<CancellationBus> {
  check(own, 'cancellationBus', ['register', 'cancel'], 'a CancellationBus', context);
  if (own) return own;
  if (!context.redis) return new InMemoryCancellationBus();
  const bus = new RedisCancellationBus(context.redis);
  await bus.start();
  return bus;
}

/**
 * Where a resumable endpoint keeps its events: `mcp.resumable` given as a store, else the
 * application's `eventStore`, else the default. Null when the endpoint is not resumable (then no
 * store is used, the application's included).
 */
export function createEventStore(
  endpoint: ResolvedMcpEndpointOptions,
  own: EventStore | undefined,
  context: McpEndpointStoreContext,
): EventStore | null {
  check(own, 'eventStore', ['storeEvent', 'replayEventsAfter'], 'an EventStore', context);
  if (endpoint.resumable === false) return null;
  if (endpoint.resumable !== true) {
    if (own && own !== endpoint.resumable) {
      throw new ParseAgentConfigError(
        `${context.optionsName}: the event store is given twice (eventStore and mcp.resumable). Pass it once: eventStore: myStore with mcp.resumable: true.`,
      );
    }
    return endpoint.resumable;
  }
  if (own) return own;
  const retention = { retentionMs: endpoint.eventRetentionMs, callLeaseMs: endpoint.callLeaseMs };
  return context.redis
    ? new RedisEventStore(context.redis, retention)
    : new InMemoryEventStore(retention);
}
