/** Injection token for the rate limiter agents share (override with your own RateLimiter). */
export const PARSE_AGENT_RATE_LIMITER = Symbol('PARSE_AGENT_RATE_LIMITER');
