// `nestjs-parse-agent/redis`: the Redis implementations of the ports, for scaled-out deployments.
// Its types name ioredis (an optional peer dependency), so they stay out of the root entry point.
// ParseAgentModule's `redis` option needs none of these: it builds them itself.
export { RedisConnection, DEFAULT_REDIS_KEY_PREFIX } from './redis/redis-connection';
export type {
  RedisClient,
  RedisClusterNode,
  RedisConnectionOptions,
  RedisStoreLogger,
} from './redis/redis-connection';
export { RedisRateLimiter, RateLimiterUnavailableError } from './redis/redis-rate-limiter';
export type { RedisRateLimiterOptions } from './redis/redis-rate-limiter';
export { RedisSessionStore, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL } from './redis/redis-session-store';
export type { RedisSessionStoreOptions } from './redis/redis-session-store';
export { RedisCancellationBus } from './redis/redis-cancellation-bus';
export { RedisEventStore } from './redis/redis-event-store';
export type { RedisEventStoreOptions } from './redis/redis-event-store';
export { RedisListChangedRelay } from './redis/redis-list-changed-relay';
export type { ListKind } from './redis/redis-list-changed-relay';
