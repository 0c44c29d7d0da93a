import { RateLimiter } from '../ports/rate-limiter';

/**
 * Injection token for the rate limiter agents share. Kept as an alias of the `RateLimiter` port
 * token: both names resolve to the same provider.
 */
export const PARSE_AGENT_RATE_LIMITER: symbol = RateLimiter;

/** Internal token: the shared services every agent of this module runs on. */
export const PARSE_AGENT_SERVICES = Symbol('parse-agent:services');

/** Internal token: the resolved `mcp` extra (endpoint settings with defaults applied). */
export const MCP_ENDPOINT_OPTIONS = Symbol('parse-agent:mcp-endpoint-options');

/** Internal token: the module's RedisConnection, or null without the `redis` option. */
export const PARSE_AGENT_REDIS = Symbol('parse-agent:redis');
