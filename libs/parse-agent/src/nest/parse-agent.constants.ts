/** Internal token: everything the composition root built (registries, ports, services). */
export const PARSE_AGENT_COMPOSITION = Symbol('parse-agent:composition');

/** Internal token: the shared services every agent of this module runs on. */
export const PARSE_AGENT_SERVICES = Symbol('parse-agent:services');

/** Internal token: the resolved `mcp` extra (endpoint settings with defaults applied). */
export const MCP_ENDPOINT_OPTIONS = Symbol('parse-agent:mcp-endpoint-options');

/** Internal token: the module's RedisConnection, or null without the `redis` option. */
export const PARSE_AGENT_REDIS = Symbol('parse-agent:redis');

/** Internal token: the context the module's MCP transports are started with. */
export const MCP_TRANSPORT_CONTEXT = Symbol('parse-agent:mcp-transport-context');

/** Internal token: the module's MCP transports (Streamable HTTP, then `mcp.transports`). */
export const MCP_TRANSPORTS = Symbol('parse-agent:mcp-transports');
