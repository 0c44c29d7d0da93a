import { ParseAgentConfigError } from '../core/errors';

/**
 * Named tool surfaces for the `tools` agent option (`tools: 'lean'`). A profile is an `only` list:
 * it narrows what the permission tier offers and never adds a tool the tier lacks, so a readonly
 * agent with `'writes'` still has no write tool. Custom (`@AgentTool`) tools are outside every
 * profile but `full`.
 */
export const TOOL_PROFILES = Object.freeze({
  /** The core read tools: schemas, query, count, one object, aggregate. */
  lean: Object.freeze([
    'get_all_schemas',
    'get_schema',
    'query_class',
    'count_objects',
    'get_object',
    'aggregate',
  ]),
  /** lean plus the grouping, distinct and explain tools, for reporting agents. */
  analytics: Object.freeze([
    'get_all_schemas',
    'get_schema',
    'query_class',
    'count_objects',
    'get_object',
    'aggregate',
    'group_by',
    'group_by_date',
    'distinct',
    'explain_query',
  ]),
  /** lean plus create and update (what a write-tier agent that edits records needs). */
  writes: Object.freeze([
    'get_all_schemas',
    'get_schema',
    'query_class',
    'count_objects',
    'get_object',
    'aggregate',
    'create_object',
    'update_object',
  ]),
  /** No narrowing: everything the tier offers (the default when `tools` is unset). */
  full: undefined,
} as const satisfies Record<string, readonly string[] | undefined>);

/** The name of a tool profile. */
export type ToolProfileName = keyof typeof TOOL_PROFILES;

/**
 * The tool names of a profile (undefined for `full`). An unknown name is an error naming the option:
 * silently falling back to the whole surface would widen what the operator asked for.
 */
export function toolProfileNames(name: string, option = 'tools'): readonly string[] | undefined {
  if (!Object.prototype.hasOwnProperty.call(TOOL_PROFILES, name)) {
    throw new ParseAgentConfigError(
      `${option}: unknown tool profile ${JSON.stringify(name)}; use one of ${Object.keys(TOOL_PROFILES).join(', ')}, a list of tool names, or { only, except }.`,
    );
  }
  return TOOL_PROFILES[name as ToolProfileName];
}
