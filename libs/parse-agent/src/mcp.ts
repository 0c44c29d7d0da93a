// `nestjs-parse-agent/mcp`: MCP without the Nest module and below it. The dispatcher's options
// and message shapes, prompt shapes, protocol constants, the untrusted-data wrapper, the
// transports (stdio, the transport interface's context, elicitation), the standalone server, and
// createAgentServices (what scripts and other hosts run agents on). McpDispatcher, PromptRegistry
// and McpTransport themselves are root names.
export type { McpDispatcherOptions } from './mcp/mcp-dispatcher';
export type {
  DispatchContext,
  DispatchMessage,
  JsonRpcNotification,
  JsonRpcResponse,
  McpServerInfo,
} from './mcp/mcp-dispatcher.types';
export {
  JSON_RPC_ERROR_CODES,
  PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './mcp/protocol.constants';
export { unwrapUntrusted, wrapUntrusted } from './mcp/tool-call-result';
export type {
  PromptArgument,
  PromptDescriptor,
  PromptRegistration,
  RenderedPrompt,
} from './mcp/prompt-registry';
export type { ToolAnnotations } from './tools/tool-definition';

// Transports without a framework
export type { McpTransportContext } from './transport/shared/mcp-transport';
export { serveMcpOverStdio } from './transport/stdio/mcp-stdio.transport';
export type { McpStdioOptions, McpStdioSession } from './transport/stdio/mcp-stdio.transport';
export { StdioTransport } from './transport/stdio/stdio.transport';
export type { StdioTransportOptions } from './transport/stdio/stdio.transport';
export type {
  ElicitationChannel,
  ElicitationRequest,
  ElicitationResult,
} from './ports/elicitation-channel';

// Hosts without the Nest module
export { startStandaloneMcpServer } from './nest/mcp/standalone-server';
export type { StandaloneMcpServer, StandaloneMcpServerOptions } from './nest/mcp/standalone-server';
export { createAgentServices } from './composition/create-agent-services';
export type {
  CreateAgentServicesOptions,
  StandaloneAgentServices,
} from './composition/create-agent-services';

// Live data: resource subscriptions and app notifications (McpNotifier is in the root).
export type { SubscribingSession } from './mcp/mcp-dispatcher.types';
export type { McpNotifyRelay, McpNotifyTarget } from './mcp/mcp-notifier';
export type { ResourceSubscriptionService } from './mcp/resource-subscriptions.types';
export type { ParsedResourceUri, ResourceKind } from './mcp/resource-uri';
