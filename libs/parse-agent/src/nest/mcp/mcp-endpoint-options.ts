import type { CanActivate, Type } from '@nestjs/common';
import type { McpTransport } from '../../transport/shared/mcp-transport';
import type {
  McpEndpointOptions as TransportEndpointOptions,
  ResolvedMcpEndpointOptions as TransportResolvedOptions,
} from '../../transport/http/mcp-endpoint-options';

/** A Nest guard as `@UseGuards` takes it: a class or an instance. */
export type McpGuard = Type<CanActivate> | CanActivate;

/**
 * The `mcp` extra of `ParseAgentModule.forRoot({ parse, agentFactory, mcp })`: where the endpoint
 * is mounted, which host guards run before `agentFactory`, the transport limits, and further
 * transports the module runs beside Streamable HTTP.
 */
export interface McpEndpointOptions extends TransportEndpointOptions<McpGuard> {
  /**
   * More transports, each started on the module's transport context at bootstrap and closed at
   * shutdown, beside the Streamable HTTP endpoint: e.g. `[new StdioTransport({ agent: {} })]`
   * (agent options get the module's defaults). One entry registers a transport.
   */
  transports?: McpTransport[];
}
export type ResolvedMcpEndpointOptions = TransportResolvedOptions<McpGuard>;
