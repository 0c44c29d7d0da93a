import type { PermissionLevel } from '../core/constants';

/**
 * The spec's published tier table: which built-in tool names each permission level may call,
 * including tools this version does not ship yet (their names are reserved: a `tools` filter may
 * name them without a warning). Each shipped tool's definition declares its own tier; a spec keeps
 * the two in agreement.
 */
const READONLY_TOOLS = [
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
  'semantic_search',
] as const;
const WRITE_TOOLS = ['create_object', 'update_object'] as const;
const ADMIN_TOOLS = ['delete_object', 'create_class', 'delete_class'] as const;

/** Tiers are cumulative: each level may use every tool of the levels below it. */
export const PERMISSION_LEVELS: Readonly<Record<PermissionLevel, readonly string[]>> =
  Object.freeze({
    readonly: [...READONLY_TOOLS],
    write: [...READONLY_TOOLS, ...WRITE_TOOLS],
    admin: [...READONLY_TOOLS, ...WRITE_TOOLS, ...ADMIN_TOOLS],
  });
