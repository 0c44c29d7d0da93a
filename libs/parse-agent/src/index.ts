// Public surface of nestjs-parse-agent: named re-exports only.
export { PARSE_AGENT_VERSION } from './version';

// Nest integration
export { ParseAgentModule } from './nest/parse-agent.module';
export { ParseAgentFactory } from './nest/parse-agent.factory';
export { AGENT_TOOL_CONTEXT_TYPE } from './nest/agent-tool.explorer';
export { PARSE_AGENT_RATE_LIMITER } from './nest/parse-agent.constants';
export { PARSE_AGENT_MODULE_OPTIONS } from './nest/parse-agent.module-definition';
export type { ParseAgentModuleExtras } from './nest/parse-agent.module-definition';
export type { McpEndpointOptions } from './nest/mcp/mcp-endpoint-options';
export type { McpAgentFactory } from './nest/mcp/mcp-http.handler';
export type { McpRequest } from './nest/mcp/mcp-request-gate';
export { startStandaloneMcpServer } from './nest/mcp/standalone-server';
export type { StandaloneMcpServer, StandaloneMcpServerOptions } from './nest/mcp/standalone-server';
export type {
  AgentDefaults,
  MongoConnectionConfig,
  ParseAgentModuleOptions,
  ParseConnectionConfig,
} from './nest/parse-agent-options.interface';

// Agent core
export { ParseAgent } from './core/parse-agent';
export type {
  AgentOptions,
  AgentServices,
  ExecuteOptions,
  ToolDefinitionsOptions,
} from './core/parse-agent';
export { AgentAccess } from './core/agent-access';
export { AgentEvents } from './core/agent-events';
export type { ToolCallEvent } from './core/agent-events';
export type { AgentIdentity, AuthType } from './core/agent-identity';
export {
  ALWAYS_KEEP_FIELDS,
  BUILTIN_CATEGORIES,
  BUILTIN_HIDDEN_CLASSES,
  DEFAULT_LIMIT,
  MAX_LIMIT,
  PERMISSION_LEVELS,
  TOOL_TIMEOUTS,
} from './core/constants';
export type { PermissionLevel, ToolCategory } from './core/constants';
export { ENV_GATES, isTruthyEnv } from './core/env-gates';
export type { FailureEnvelope, SuccessEnvelope, ToolEnvelope } from './core/envelope';
export {
  AccessDeniedError,
  AgentCancelledError,
  AgentUnauthorizedError,
  AgentValidationError,
  InvalidQueryError,
  ParseAgentConfigError,
  ParseAgentError,
  ParseRequestError,
  PermissionDeniedError,
  RateLimitExceededError,
  RecursionLimitExceededError,
  SecurityBlockedError,
  ToolFilteredError,
  ToolTimeoutError,
} from './core/errors';
export type { AccessDeniedKind } from './core/errors';
export { KeyedSlidingWindowRateLimiter, SlidingWindowRateLimiter } from './core/rate-limiter';
export type { RateLimiter } from './core/rate-limiter';
export { suppressSecurityBanners } from './core/security-banner';

// Model decorators and metadata
export {
  AgentDescription,
  AgentAllowCollscan,
  AgentVisible,
  ParseClass,
} from './metadata/decorators/parse-class.decorator';
export { AgentHidden } from './metadata/decorators/agent-hidden.decorator';
export type { AgentHiddenOptions } from './metadata/decorators/agent-hidden.decorator';
export {
  AgentField,
  AgentFields,
  AgentJoinFields,
  AgentLargeFields,
} from './metadata/decorators/agent-fields.decorators';
export { AgentCanonicalFilter } from './metadata/decorators/agent-canonical-filter.decorator';
export { AgentTenantScope } from './metadata/decorators/agent-tenant-scope.decorator';
export { BelongsTo, HasMany } from './metadata/decorators/relation.decorators';
export { AgentMethod } from './metadata/decorators/agent-method.decorator';
export { AgentTool } from './metadata/decorators/agent-tool.decorator';
export type { AgentToolOptions } from './metadata/decorators/agent-tool.decorator';
export { MetadataRegistry } from './metadata/metadata-registry';
export type {
  AgentFieldOptions,
  AgentMethodOptions,
  ClassMetadata,
  ModelClass,
  RelationEdge,
  TenantScopeOptions,
  TenantScopeSubject,
} from './metadata/metadata.types';

// Security building blocks
export type { Where } from './security/constraint-translator';
export type { ListFilter, ListFilterInput } from './security/class-filter';
export { INTERNAL_FIELDS } from './security/internal-fields';

// Data path
export { ParseRestClient } from './data/parse-rest-client';
export type { ParseAuth, ParseSchema } from './data/parse-rest-client';

// Tools
export { ToolRegistry } from './tools/tool-registry';
export type { JsonSchema, ToolDefinition, ToolRegistration } from './tools/tool-definition';
export type { ProgressUpdate, ToolContext } from './tools/tool-context';

// MCP protocol layer (pure)
export { McpDispatcher } from './mcp/mcp-dispatcher';
export type { McpDispatcherOptions } from './mcp/mcp-dispatcher';
export { PromptRegistry } from './mcp/prompt-registry';
export type {
  PromptArgument,
  PromptDescriptor,
  PromptRegistration,
  RenderedPrompt,
} from './mcp/prompt-registry';
export { BUILTIN_PROMPTS } from './mcp/builtin-prompts';
export { PARSE_CONVENTIONS } from './mcp/parse-conventions';
export {
  JSON_RPC_ERROR_CODES,
  negotiateProtocolVersion,
  PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './mcp/protocol.constants';
export type {
  DispatchContext,
  DispatchMessage,
  JsonRpcNotification,
  JsonRpcResponse,
  McpServerInfo,
} from './mcp/mcp-dispatcher.types';
