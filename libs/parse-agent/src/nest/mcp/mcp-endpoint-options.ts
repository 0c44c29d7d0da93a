import type { CanActivate, Type } from '@nestjs/common';
import type {
  McpEndpointOptions as TransportEndpointOptions,
  ResolvedMcpEndpointOptions as TransportResolvedOptions,
} from '../../transport/http/mcp-endpoint-options';

/** A Nest guard as `@UseGuards` takes it: a class or an instance. */
export type McpGuard = Type<CanActivate> | CanActivate;

/**
 * The `mcp` extra of `ParseAgentModule.forRoot({ parse, agentFactory, mcp })`: where the endpoint
 * is mounted, which host guards run before `agentFactory`, and the transport limits.
 */
export type McpEndpointOptions = TransportEndpointOptions<McpGuard>;
export type ResolvedMcpEndpointOptions = TransportResolvedOptions<McpGuard>;
