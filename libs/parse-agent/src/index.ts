// Public surface of nestjs-parse-agent: named re-exports only. Anything not listed here is internal.
// This entry point carries no types of optional peer dependencies, so an app compiles against it
// without them (even with skipLibCheck off). Integrations that need one have their own subpath:
// `nestjs-parse-agent/redis` (redis.ts), `/openai` (openai.ts), `/anthropic` (anthropic.ts).
export { PARSE_AGENT_VERSION } from './version';

// Nest integration
export { ParseAgentModule } from './nest/parse-agent.module';
export { ParseAgentFactory } from './nest/parse-agent.factory';
export { AGENT_TOOL_CONTEXT_TYPE } from './nest/agent-tool.explorer';
export { PARSE_AGENT_MODULE_OPTIONS } from './nest/parse-agent.module-definition';
export { ParseAgentStartupCheck } from './nest/parse-agent-startup-check';
export type { StartupCheckStatus } from './nest/parse-agent-startup-check';
export type { StartupCheckMode, StartupCheckOptions } from './composition/startup-check';
export type { ParseAgentModuleExtras } from './nest/parse-agent.module-definition';
export type { McpEndpointOptions, McpGuard } from './nest/mcp/mcp-endpoint-options';
export { startStandaloneMcpServer } from './nest/mcp/standalone-server';
export { ParseAgentConsoleModule } from './nest/console/parse-agent-console.module';
export type { ConsoleCaller, ParseAgentConsoleOptions } from './nest/console/console-options';
export type { ConsoleActivityEntry } from './nest/console/console-activity';
export type {
  ConsoleClassPolicy,
  ConsolePolicy,
  ConsoleToolPolicy,
  WithheldReason,
} from './console/console-policy';
export type { StandaloneMcpServer, StandaloneMcpServerOptions } from './nest/mcp/standalone-server';
export type {
  AgentDefaults,
  MongoConnectionConfig,
  AnalyticsOptions,
  ParseAgentModuleOptions,
  ParseConnectionConfig,
  PostgresConnectionConfig,
} from './composition/parse-agent-options.interface';

// Shipped auth: guards, the principal they set, and the agentFactory that binds it
export { ParseSessionGuard } from './nest/auth/parse-session.guard';
export type { GuardedRequest } from './nest/auth/parse-session.guard';
export { McpApiKeyGuard } from './nest/auth/mcp-api-key.guard';
export { ParseAgentAuthGuard } from './nest/auth/parse-agent-auth.guard';
export { principalOf } from './auth/parse-agent-principal';
export type {
  ParseAgentOperatorPrincipal,
  ParseAgentPrincipal,
  ParseAgentUserPrincipal,
  RequestWithPrincipal,
} from './auth/parse-agent-principal';
export { agentOptionsForPrincipal, bindAgentToPrincipal } from './auth/bind-agent-to-principal';
export type {
  BindAgentToPrincipalOptions,
  ExtraAgentOptions,
} from './auth/bind-agent-to-principal';
export { ParseSessionVerifier, SessionCheckUnavailableError } from './auth/session-verifier';
export type { SessionVerifierOptions, VerifiedSession } from './auth/session-verifier';
export { tenantOfUser } from './auth/tenant-source';
export type { TenantBinding, TenantSource } from './auth/tenant-source';
export type { ParseAgentAuthOptions } from './auth/auth-options';
export { secretsEqual } from './auth/secrets-equal';

// HTTP transport types the agentFactory sees
export type { McpAgentFactory } from './transport/http/request-agent';
export type { McpRequest } from './transport/http/mcp-request';

// The agent
export { ParseAgent } from './agent/parse-agent';
export type {
  AgentAskOptions,
  AgentOptions,
  AgentServices,
  DescribeOptions,
  ExecuteOptions,
  PermitDecision,
  ToolDefinitionsOptions,
} from './agent/parse-agent';
export type {
  AfterToolCallHook,
  AgentHooks,
  BeforeToolCallHook,
  ErrorHook,
  HookDecision,
  HookErrorContext,
  LlmResponseHook,
  ToolCallInfo,
  ToolCallOutcome,
} from './agent/agent-hooks';
export type { OperationLogEntry } from './agent/agent-observability';
// ParseAgent's base class and its options without `parent`: exported as types so the API report
// lists every member and option.
export type { AgentCore } from './agent/agent-core';
export type { AgentOwnOptions } from './agent/agent-options';
export { createAgentServices } from './composition/create-agent-services';
export type {
  CreateAgentServicesOptions,
  StandaloneAgentServices,
} from './composition/create-agent-services';
// The built-in database paths' options (`postgres`, `mongo`) and `database: { kind, uri }`
export type { DatabaseSetting, DataPathOptions } from './composition/data-paths';

// Ground: identity, events, envelope, errors, limits
export { AgentEvents } from './core/agent-events';
export type { MutationEvent, SecurityEvent, ToolCallEvent } from './core/agent-events';
export type { AgentIdentity, AuthType } from './core/agent-identity';
export {
  ALWAYS_KEEP_FIELDS,
  DEFAULT_LIMIT,
  DEFAULT_QUERY_COST_LIMITS,
  MAX_LIMIT,
} from './core/constants';
export type { PermissionLevel, QueryCostLimits } from './core/constants';
export type { ParseSchema, SchemaSource } from './core/parse-schema';
export type { FailureEnvelope, SuccessEnvelope, ToolEnvelope } from './core/envelope';
export {
  AccessDeniedError,
  AgentCancelledError,
  AgentUnauthorizedError,
  AgentValidationError,
  InvalidQueryError,
  UnknownFieldError,
  ParseAgentConfigError,
  ParseAgentError,
  ParseRequestError,
  PermissionDeniedError,
  PointerShapeError,
  RateLimitExceededError,
  RateLimiterUnavailableError,
  RecursionLimitExceededError,
  SecurityBlockedError,
  ToolFilteredError,
  ToolTimeoutError,
  StoreUnavailableError,
  UnknownToolError,
} from './core/errors';
export type { AccessDeniedKind } from './core/errors';
export {
  resetSecurityBanners,
  routeSecurityBanners,
  securityBannersSuppressed,
  suppressSecurityBanners,
} from './core/security-banner';
export type { SecurityBannerSink } from './core/security-banner';

// Ports: interfaces with same-named injection tokens, and their in-memory defaults
export { RateLimiter } from './ports/rate-limiter';
export {
  KeyedSlidingWindowRateLimiter,
  SlidingWindowRateLimiter,
} from './ports/in-memory-rate-limiter';
export { SessionLimitError, SessionStore } from './ports/session-store';
export type { McpSession, SessionCreateOptions } from './ports/session-store';
export { InMemorySessionStore } from './ports/in-memory-session-store';
export { CancellationBus } from './ports/cancellation-bus';
export type { RequestId } from './ports/cancellation-bus';
export { InMemoryCancellationBus } from './ports/in-memory-cancellation-bus';
export {
  DATA_PATH_RANK,
  DataPathProvider,
  directDatabaseRank,
  PARSE_SERVER_FIRST,
} from './ports/data-path';
export type {
  DataClassSpec,
  DataCreateResult,
  DataFindQuery,
  DataOperation,
  DataPath,
  DataPathProvidersOption,
  DataPrincipals,
  DataRow,
  SearchResult,
  SearchSpec,
} from './ports/data-path';
export type {
  ElicitationChannel,
  ElicitationRequest,
  ElicitationResult,
} from './ports/elicitation-channel';

export { EventStore, UnknownEventError } from './ports/event-store';
export type { EventId, StoredEvent, StoredMessage, StreamId } from './ports/event-store';
export { InMemoryEventStore } from './ports/in-memory-event-store';
export type { InMemoryEventStoreOptions } from './ports/in-memory-event-store';
export { LlmProvider } from './ports/llm-provider';
export type {
  LlmAssistantMessage,
  LlmMessage,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  LlmSystemMessage,
  LlmToolCall,
  LlmToolDefinition,
  LlmToolMessage,
  LlmUsage,
  LlmUserMessage,
} from './ports/llm-provider';
export type {
  AgentConversation,
  AskOptions,
  ConversationAgent,
  ConversationAnswer,
  ConversationFactory,
  ConversationOptions,
  ConversationToolDefinition,
  ConversationUser,
  FinishReason,
  LlmProviderOptions,
  LlmResponseInfo,
  ModelPrice,
  ToolCallRecord,
  UsageTotals,
} from './ports/conversation';

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
export {
  AgentTenantScope,
  AgentTenantShared,
} from './metadata/decorators/agent-tenant-scope.decorator';
export { BelongsTo, HasMany } from './metadata/decorators/relation.decorators';
export { AgentMethod } from './metadata/decorators/agent-method.decorator';
export { BUILTIN_HIDDEN_CLASSES } from './metadata/builtin-hidden-classes';
export type { UnregisteredClassPolicy } from './metadata/builtin-hidden-classes';
export { MetadataRegistry } from './metadata/metadata-registry';
export { auditMetadata, formatMetadataAudit } from './metadata/metadata-audit';
export type { DeclaredNamesReport, MetadataAuditReport } from './metadata/metadata-audit';
export type { MetadataRegistryOptions } from './metadata/metadata-registry';
export type {
  AgentFieldOptions,
  AgentMethodOptions,
  ClassMetadata,
  ModelClass,
  RelationEdge,
  TenantScopeOptions,
  TenantScopeSubject,
} from './metadata/metadata.types';
// class-validator DTOs where a JSON Schema is accepted (the packages are optional peers)
export type { DtoClass } from './validation/dto';

// Query language and policy (types custom tools use)
export type { Where } from './query/constraint-translator';
export { INTERNAL_FIELDS } from './query/internal-fields';
export type { ListFilterInput } from './security/class-filter';
export type { ReadPolicy, PlannedRead, ReadRequest } from './security/read-policy';
export { WritePolicy } from './security/write-policy';
export type { PlannedWrite } from './security/write-policy';
// Row-ACL helpers for custom tools and agent methods on the direct database paths
export { agentPrincipals, refreshAgentPrincipals } from './security/agent-principals';
export type { PrincipalContext } from './security/agent-principals';
export {
  aclReadMatchStage,
  aclReadSqlClause,
  aclWriteMatchStage,
  aclWriteSqlClause,
} from './security/acl-match';
export type { AclMatchStage, AclSqlClause, AclSqlOptions } from './security/acl-match';

// Data: a health check of Parse Server for start-up scripts and readiness probes. The clients
// and data paths themselves are internal; `ParseAgentFactory.invalidateCaches()` drops their
// cached schemas and role expansions.
export { checkParseServer } from './data/parse-rest/check-parse-server';
export type {
  CheckParseServerOptions,
  ParseServerCheck,
  ParseServerProblem,
} from './data/parse-rest/check-parse-server';
// Shapes of the `postgres` option and the errors the direct database paths throw
export type { PostgresDataPathOptions } from './data/postgres/postgres-data-access';
export type { PgPoolLike, PgPoolClientLike, PgClientLike } from './data/postgres/pg-driver';
export { DatabaseTimeoutError } from './data/postgres/pg-read-transaction';

// Tools
export { AgentTool } from './tools/agent-tool.decorator';
export type { AgentToolOptions } from './tools/agent-tool.decorator';
export { ToolRegistry } from './tools/tool-registry';
export type {
  JsonSchema,
  ToolAccess,
  ToolAnnotations,
  ToolDefinition,
} from './tools/tool-definition';
export type {
  MasterToolRegistration,
  PolicedToolContext,
  PolicedToolRegistration,
  ToolRegistration,
} from './tools/custom-tool';
export type { PolicedReader } from './tools/read/policed-reader';
export type { PolicedWrite, PolicedWriter } from './tools/write/policed-writer';
export type {
  ConfirmationRequest,
  MutationAuditInput,
  AnalyticsSettings,
  ProgressUpdate,
  ToolAgent,
  ToolContext,
} from './tools/tool-context';
export type { AgentMethodContext } from './tools/agent-method-context';
export { DataPathUnavailableError } from './data/data-router';
export type { MongoPathOptions } from './data/mongo/create-mongo-data-path';
export { MongoTimeLimitError } from './data/mongo/mongo-data-path';
export { ENV_GATES, isTruthyEnv } from './tools/env-gates';
export {
  rawCrudEnabled,
  rawSchemaEnabled,
  schemaOpsEnabled,
  toolAllowed,
  toolCategory,
  writeToolsEnabled,
} from './tools/tool-introspection';
export type { ToolEnvGate } from './tools/env-gates';
export { PERMISSION_LEVELS } from './tools/tool-tiers';
export { BUILTIN_CATEGORIES } from './tools/tool-categories';
export type { ToolCategory } from './tools/tool-categories';

// Conversations with a language model (client)
export { ParseAgentConversation } from './client/parse-agent-conversation';
export { ConversationResult } from './client/conversation-result';
export type { ConversationEvent } from './client/conversation-result';
export { ConversationUsage } from './client/conversation-usage';
export { DEFAULT_MAX_ITERATIONS } from './client/parse-agent-conversation';
export { DEFAULT_MODEL_PRICES } from './client/model-prices';
export type { ModelPriceTable } from './client/model-prices';
export { createLlmProvider, LLM_ENV, LLM_PROVIDER_NAMES } from './client/provider-from-env';
export {
  CONVERSATION_SNAPSHOT_VERSION,
  DEFAULT_RESTORE_MAX_BYTES,
  DEFAULT_RESTORE_MAX_MESSAGES,
} from './client/conversation-snapshot';
export type {
  ConversationSnapshot,
  RestoreLimits,
  SnapshotMessage,
} from './client/conversation-snapshot';
export { LLM_ALLOWED_BASE_URLS_ENV, OFFICIAL_LLM_ENDPOINTS } from './client/endpoint-allowlist';
export {
  conversationFactory,
  isLlmConfigured,
  resolveLlmProvider,
} from './client/conversation-factory';
export { ConversationBusyError, LlmProviderError } from './client/conversation-errors';

// Transports without a framework
export { serveMcpOverStdio } from './transport/stdio/mcp-stdio.transport';
export type { McpStdioOptions, McpStdioSession } from './transport/stdio/mcp-stdio.transport';
export { StdioTransport } from './transport/stdio/stdio.transport';
export type { StdioTransportOptions } from './transport/stdio/stdio.transport';
export type { McpTransport, McpTransportContext } from './transport/shared/mcp-transport';

// MCP protocol layer (pure)
export { McpDispatcher } from './mcp/mcp-dispatcher';
export { unwrapUntrusted, wrapUntrusted } from './mcp/tool-call-result';
export type { McpDispatcherOptions } from './mcp/mcp-dispatcher';
export { PromptRegistry } from './mcp/prompt-registry';
export type {
  PromptArgument,
  PromptDescriptor,
  PromptRegistration,
  RenderedPrompt,
} from './mcp/prompt-registry';
export {
  JSON_RPC_ERROR_CODES,
  PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './mcp/protocol.constants';
export type {
  DispatchContext,
  DispatchMessage,
  JsonRpcNotification,
  JsonRpcResponse,
  McpServerInfo,
  SubscribingSession,
} from './mcp/mcp-dispatcher.types';
// Live data: resource subscriptions on Parse LiveQuery, and notifications pushed by the app
export { McpNotifier } from './mcp/mcp-notifier';
export type { McpNotifyRelay, McpNotifyTarget } from './mcp/mcp-notifier';
export type { ResourceSubscriptionService } from './mcp/resource-subscriptions.types';
export type { ParsedResourceUri, ResourceKind } from './mcp/resource-uri';
export type { LiveQueryOptions } from './live/live-query-options';
