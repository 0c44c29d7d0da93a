// Public surface of nestjs-parse-agent: named re-exports only. Anything not listed here or in a
// subpath entry point is internal.
//
// The root carries what a Nest application writes on its first day: the module and its options,
// the factory, the agent, decorators, the shipped guards, port tokens, events and errors. The
// rest sits behind subpaths, one per concern (each its own file beside this one, its own API
// report under etc/, and a row in docs/changelog.md when a name moves):
//   nestjs-parse-agent/llm       conversations, language model providers and their settings
//   nestjs-parse-agent/mcp       the dispatcher's shapes, prompts, protocol constants, transports,
//                                the standalone server and createAgentServices
//   nestjs-parse-agent/data      data paths, policies and the policed reader/writer custom tools use
//   nestjs-parse-agent/auth      session verification, principals and the row-ACL helpers
//   nestjs-parse-agent/stores    the in-memory port implementations and the shapes a store keeps
//   nestjs-parse-agent/ops       env gates, banners, limits, hooks' parts, audits, health checks
//   nestjs-parse-agent/redis     the Redis ports (ioredis), /openai and /anthropic (their SDKs)
// This entry point carries no types of optional peer dependencies, so an app compiles against it
// without them (even with skipLibCheck off). The root stays at or under 150 names
// (test/architecture/entry-points.spec.ts; `node scripts/count-exports.js` counts them): a new
// name goes here only when an application needs it on day one, else in its subpath.
export { PARSE_AGENT_VERSION } from './version';

// Nest integration: the module, its options, the factory and the start-up check
export { ParseAgentModule } from './nest/parse-agent.module';
export { ParseAgentFactory } from './nest/parse-agent.factory';
export { AGENT_TOOL_CONTEXT_TYPE } from './nest/agent-tool.explorer';
export { PARSE_AGENT_MODULE_OPTIONS } from './nest/parse-agent.module-definition';
export type { ParseAgentModuleExtras } from './nest/parse-agent.module-definition';
export type {
  AgentDefaults,
  AnalyticsOptions,
  MongoConnectionConfig,
  ParseAgentModuleOptions,
  ParseConnectionConfig,
  PostgresConnectionConfig,
} from './composition/parse-agent-options.interface';
export type { McpEndpointOptions, McpGuard } from './nest/mcp/mcp-endpoint-options';
export { ParseAgentStartupCheck } from './nest/parse-agent-startup-check';
export type { StartupCheckStatus } from './nest/parse-agent-startup-check';
export type { StartupCheckMode, StartupCheckOptions } from './composition/startup-check';
export { ParseAgentConsoleModule } from './nest/console/parse-agent-console.module';
export type { ConsoleCaller, ParseAgentConsoleOptions } from './nest/console/console-options';

// Shipped auth: guards, the principal they set, and the agentFactory that binds it
export { McpApiKeyGuard } from './nest/auth/mcp-api-key.guard';
export { ParseAgentAuthGuard } from './nest/auth/parse-agent-auth.guard';
export { ParseSessionGuard } from './nest/auth/parse-session.guard';
export type { GuardedRequest } from './nest/auth/parse-session.guard';
export { principalOf } from './auth/parse-agent-principal';
export type {
  ParseAgentOperatorPrincipal,
  ParseAgentPrincipal,
  ParseAgentUserPrincipal,
  RequestWithPrincipal,
} from './auth/parse-agent-principal';
export { agentOptionsForPrincipal, bindAgentToPrincipal } from './auth/bind-agent-to-principal';
export type { BindAgentToPrincipalOptions } from './auth/bind-agent-to-principal';
export { tenantOfUser } from './auth/tenant-source';
export type { TenantBinding, TenantSource } from './auth/tenant-source';
export type { ParseAgentAuthOptions } from './auth/auth-options';
// What the agentFactory receives
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
export type { AgentHooks } from './agent/agent-hooks';
// ParseAgent's base class and its options without `parent`: exported as types so the API report
// lists every member and option.
export type { AgentCore } from './agent/agent-core';
export type { AgentOwnOptions } from './agent/agent-options';

// Ground: identity, events, envelope, errors
export { AgentEvents } from './core/agent-events';
export type { AbandonedStreamEvent, ApprovalEvent, DataOperationEvent } from './core/agent-events';
export { PROMPT_VERSION } from './core/constants';
export type { PromptCanaryOptions } from './agent/prompt-canaries';
export { DEFAULT_APPROVAL_TIMEOUT_MS, type ApprovalOptions } from './agent/agent-approval';
export type { MutationEvent, SecurityEvent, ToolCallEvent } from './core/agent-events';
export type { AgentIdentity, AuthType } from './core/agent-identity';
export type { PermissionLevel, QueryCostLimits } from './core/constants';
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
  PointerShapeError,
  RateLimitExceededError,
  RateLimiterUnavailableError,
  RecursionLimitExceededError,
  SecurityBlockedError,
  StoreUnavailableError,
  ToolFilteredError,
  ToolTimeoutError,
  UnknownFieldError,
  UnknownToolError,
} from './core/errors';
export type { AccessDeniedKind } from './core/errors';

// Ports: the injection tokens (each an interface of the same name), one `forRoot` option each.
// Their in-memory defaults are in `nestjs-parse-agent/stores`, the Redis ones in `/redis`.
export { CancellationBus } from './ports/cancellation-bus';
export { DataPathProvider } from './ports/data-path';
export { EventStore } from './ports/event-store';
export { LlmProvider } from './ports/llm-provider';
export { RateLimiter } from './ports/rate-limiter';
export { SessionStore } from './ports/session-store';

// Model decorators and metadata
export {
  AgentAllowCollscan,
  AgentDescription,
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
export { MetadataRegistry } from './metadata/metadata-registry';
export type {
  AgentFieldOptions,
  AgentMethodOptions,
  ModelClass,
  TenantScopeOptions,
  TenantScopeSubject,
} from './metadata/metadata.types';
// class-validator DTOs where a JSON Schema is accepted (the packages are optional peers)
export type { DtoClass } from './validation/dto';
// The query language of `where`, filters and canonical filters
export type { Where } from './query/constraint-translator';

// Custom tools and the registries
export { AgentTool } from './tools/agent-tool.decorator';
export type { AgentToolOptions } from './tools/agent-tool.decorator';
export { ToolRegistry } from './tools/tool-registry';
export type { JsonSchema, ToolAccess, ToolDefinition } from './tools/tool-definition';
export type { PolicedToolContext, ToolRegistration } from './tools/custom-tool';
export type { ArgumentsOf } from './tools/schema-types';
export type { ToolContext } from './tools/tool-context';
export type { AgentMethodContext } from './tools/agent-method-context';
export { TOOL_PROFILES, type ToolProfileName } from './tools/tool-profiles';
export {
  IMPERSONATION_SESSION_TTL_MS,
  type ImpersonateOptions,
  type ImpersonationInfo,
  type ImpersonationTarget,
} from './agent/agent-impersonation';
export type { ToolCategory } from './tools/tool-categories';
export { PromptRegistry } from './mcp/prompt-registry';
export { McpDispatcher } from './mcp/mcp-dispatcher';
export type { McpTransport } from './transport/shared/mcp-transport';

// Retrieval: semantic_search over @AgentSearchable classes. The stores, chunk shapes and spend
// limiter's port are in `nestjs-parse-agent/data`; the OpenAI-compatible embeddings in `/llm`.
export { AgentSearchable } from './metadata/decorators/agent-searchable.decorator';
export type { AgentSearchableOptions } from './metadata/metadata.types';
export { EmbeddingProvider } from './ports/embedding-provider';
export { EmbeddingModelMismatchError } from './ports/embedding-store';
export { LocalLexicalEmbedder } from './ports/local-lexical-embedder';
export { SearchIndexer } from './retrieval/search-indexer';
export { EmbeddingSpendCap } from './retrieval/embedding-spend-cap';
export type { EmbeddingSpendCapOptions } from './retrieval/embedding-spend-cap';

// Live data: resource subscriptions on Parse LiveQuery (the `liveQuery` option), and notifications
// an app pushes to a session's stream. The subscription service's shapes are in `/mcp`.
export { McpNotifier } from './mcp/mcp-notifier';
export type { LiveQueryOptions } from './live/live-query-options';
