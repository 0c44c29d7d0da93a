// `nestjs-parse-agent/ops`: what operators and start-up scripts reach for. Health checks of Parse
// Server and the metadata, the env gates that switch tool families on, tool tiers and categories,
// the security banners, query limits, the parts of hooks and the operation log, and the console's
// policy shapes.

// Health checks and audits
export { checkParseServer } from './data/parse-rest/check-parse-server';
export type {
  CheckParseServerOptions,
  ParseServerCheck,
  ParseServerProblem,
} from './data/parse-rest/check-parse-server';
export { auditMetadata, formatMetadataAudit } from './metadata/metadata-audit';
export type { DeclaredNamesReport, MetadataAuditReport } from './metadata/metadata-audit';

// Env gates, tiers and categories
export { ENV_GATES, isTruthyEnv } from './tools/env-gates';
export type { ToolEnvGate } from './tools/env-gates';
export {
  rawCrudEnabled,
  rawSchemaEnabled,
  schemaOpsEnabled,
  toolAllowed,
  toolCategory,
  writeToolsEnabled,
} from './tools/tool-introspection';
export { PERMISSION_LEVELS } from './tools/tool-tiers';
export { BUILTIN_CATEGORIES } from './tools/tool-categories';

// Security banners (master key, unhidden classes)
export {
  resetSecurityBanners,
  routeSecurityBanners,
  securityBannersSuppressed,
  suppressSecurityBanners,
} from './core/security-banner';
export type { SecurityBannerSink } from './core/security-banner';

// Limits
export { DEFAULT_LIMIT, DEFAULT_QUERY_COST_LIMITS, MAX_LIMIT } from './core/constants';

// Hooks' parts and the operation log
export type {
  AfterToolCallHook,
  BeforeToolCallHook,
  ErrorHook,
  HookDecision,
  HookErrorContext,
  LlmResponseHook,
  ToolCallInfo,
  ToolCallOutcome,
} from './agent/agent-hooks';
export type { OperationLogEntry } from './agent/agent-observability';

// The console's policy and activity shapes
export type { ConsoleActivityEntry } from './nest/console/console-activity';
export type {
  ConsoleClassPolicy,
  ConsolePolicy,
  ConsoleToolPolicy,
  WithheldReason,
} from './console/console-policy';
