/** Permission tiers, tool lists, limits and timeouts: the numbers the agent's behaviour is built on. */

export type PermissionLevel = 'readonly' | 'write' | 'admin';

export const READONLY_TOOLS = [
  'get_all_schemas',
  'get_schema',
  'query_class',
  'count_objects',
  'get_object',
  'get_objects',
  'get_sample_objects',
  'aggregate',
  'explain_query',
  'call_method',
  'export_data',
  'group_by',
  'group_by_date',
  'distinct',
  'list_tools',
  'atlas_text_search',
  'atlas_autocomplete',
  'atlas_faceted_search',
] as const;

export const WRITE_TOOLS = ['create_object', 'update_object'] as const;
export const ADMIN_TOOLS = ['delete_object', 'create_class', 'delete_class'] as const;

/** Tiers are cumulative: each level may use every tool of the levels below it. */
export const PERMISSION_LEVELS: Readonly<Record<PermissionLevel, readonly string[]>> =
  Object.freeze({
    readonly: [...READONLY_TOOLS],
    write: [...READONLY_TOOLS, ...WRITE_TOOLS],
    admin: [...READONLY_TOOLS, ...WRITE_TOOLS, ...ADMIN_TOOLS],
  });

export const PERMISSION_HIERARCHY: Readonly<Record<PermissionLevel, number>> = Object.freeze({
  readonly: 0,
  write: 1,
  admin: 2,
});

export const PERMISSION_LEVEL_NAMES = Object.keys(PERMISSION_HIERARCHY) as PermissionLevel[];

export const WRITE_GATED_TOOLS = ['create_object', 'update_object', 'delete_object'] as const;
export const SCHEMA_GATED_TOOLS = ['create_class', 'delete_class'] as const;

export type ToolCategory =
  'discovery' | 'schema' | 'query' | 'aggregate' | 'mutation' | 'export' | 'custom';

export const BUILTIN_CATEGORIES: Readonly<Record<ToolCategory, string>> = Object.freeze({
  discovery: 'Find out which tools this agent may use.',
  schema: 'Inspect classes: fields, types, indexes and permissions.',
  query: 'Read records: queries, counts, single objects, samples, plans.',
  aggregate: 'Group, summarise and join with aggregation pipelines.',
  mutation: 'Run domain actions the application declared as agent methods.',
  export: 'Export rows in bulk as CSV, Markdown or a text table.',
  custom: 'Tools the application registered without a built-in category.',
});

export const TOOL_CATEGORIES: Readonly<Record<string, ToolCategory>> = Object.freeze({
  list_tools: 'discovery',
  get_all_schemas: 'schema',
  get_schema: 'schema',
  query_class: 'query',
  count_objects: 'query',
  get_object: 'query',
  get_objects: 'query',
  get_sample_objects: 'query',
  explain_query: 'query',
  atlas_text_search: 'query',
  atlas_autocomplete: 'query',
  atlas_faceted_search: 'query',
  aggregate: 'aggregate',
  group_by: 'aggregate',
  group_by_date: 'aggregate',
  distinct: 'aggregate',
  call_method: 'mutation',
  export_data: 'export',
});

/** Seconds each built-in tool may run before it is aborted. Registered tools default to 30. */
export const TOOL_TIMEOUTS: Readonly<Record<string, number>> = Object.freeze({
  aggregate: 60,
  query_class: 30,
  explain_query: 30,
  call_method: 60,
  get_all_schemas: 15,
  get_schema: 10,
  count_objects: 20,
  get_object: 10,
  get_objects: 20,
  get_sample_objects: 15,
  export_data: 60,
  group_by: 45,
  group_by_date: 45,
  distinct: 30,
  list_tools: 5,
  atlas_text_search: 30,
  atlas_autocomplete: 15,
  atlas_faceted_search: 45,
});
export const DEFAULT_TOOL_TIMEOUT = 30;

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
export const MAX_GET_OBJECTS_IDS = 50;
export const DEFAULT_SAMPLE_LIMIT = 5;
export const MAX_SAMPLE_LIMIT = 20;
export const MAX_INCLUDE_FIELDS = 20;
export const MAX_KEYS_FIELDS = 64;
export const ALLOWLIST_PREVIEW_CAP = 20;
export const MAX_QUERY_DEPTH = 8;
export const MAX_REGEX_LENGTH = 256;
export const DEFAULT_RATE_LIMIT = 60;
export const DEFAULT_RATE_WINDOW_SECONDS = 60;
export const DEFAULT_RECURSION_DEPTH = 4;

export const CLASS_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const OBJECT_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
/** keys / include entries: dotted paths whose segments start with a letter. */
export const FIELD_PATH_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,127}(\.[A-Za-z][A-Za-z0-9_]{0,127})*$/;
export const CORRELATION_ID_PATTERN = /^[A-Za-z0-9._-]+$/;
export const MAX_CORRELATION_ID_LENGTH = 128;

/** Always returned alongside an allowlist; never refused in keys. */
export const ALWAYS_KEEP_FIELDS = ['objectId', 'createdAt', 'updatedAt'] as const;

/** Parse's own classes that agents never see unless the application unhides them. */
export const BUILTIN_HIDDEN_CLASSES = [
  '_Session',
  '_Product',
  '_JobStatus',
  '_JobSchedule',
] as const;

/** Argument names whose values (and, for some, names) never reach events or logs. */
export const SENSITIVE_ARGUMENT_KEYS = new Set([
  'where',
  'pipeline',
  'session_token',
  'password',
  'secret',
  'token',
  'auth_data',
  'authData',
  'recovery_codes',
  'api_key',
  'master_key',
  'acl_user',
  'acl_role',
  'ids',
  'keys',
  'include',
  'arguments',
]);

export function isPermissionLevel(value: unknown): value is PermissionLevel {
  return typeof value === 'string' && value in PERMISSION_HIERARCHY;
}

export function timeoutFor(toolName: string, registered?: number): number {
  return registered ?? TOOL_TIMEOUTS[toolName] ?? DEFAULT_TOOL_TIMEOUT;
}
