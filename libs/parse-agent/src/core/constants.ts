/** Permission tiers, limits and name patterns: the numbers the agent's behaviour is built on. */

export type PermissionLevel = 'readonly' | 'write' | 'admin';

export const PERMISSION_HIERARCHY: Readonly<Record<PermissionLevel, number>> = Object.freeze({
  readonly: 0,
  write: 1,
  admin: 2,
});

export function isPermissionLevel(value: unknown): value is PermissionLevel {
  return typeof value === 'string' && value in PERMISSION_HIERARCHY;
}

/** Whether `level` reaches `required` (tiers are cumulative): the one tier comparison. */
export function tierReaches(level: PermissionLevel, required: PermissionLevel): boolean {
  return PERMISSION_HIERARCHY[required] <= PERMISSION_HIERARCHY[level];
}

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

/**
 * What one `where` may cost before anything reaches Parse: every subquery is a join Parse plans
 * and runs per row, and long `$or` lists or many regexes multiply the work of one call.
 */
export interface QueryCostLimits {
  /** `$inQuery`, `$notInQuery`, `$select`, `$dontSelect`, `$relatedTo`, at any depth. */
  maxSubqueries: number;
  /** Clauses inside `$or` / `$and` / `$nor`, summed over the whole where. */
  maxLogicalClauses: number;
  /** Entries of one `$in` / `$nin` / `$all` / `$containedIn` / `$containsAll` list. */
  maxListLength: number;
  /** `$regex` constraints in the whole where. */
  maxRegexes: number;
  /** The where as JSON, in bytes. */
  maxWhereBytes: number;
}

export const DEFAULT_QUERY_COST_LIMITS: Readonly<QueryCostLimits> = Object.freeze({
  maxSubqueries: 4,
  maxLogicalClauses: 32,
  maxListLength: 500,
  maxRegexes: 8,
  maxWhereBytes: 16 * 1024,
});
export const DEFAULT_RATE_LIMIT = 60;
export const DEFAULT_RATE_WINDOW_SECONDS = 60;
export const DEFAULT_RECURSION_DEPTH = 4;

/**
 * Version of the text this library puts before a model: the conversation's system prompt, the MCP
 * server instructions, the built-in prompts and the untrusted-data wrapper. It changes whenever
 * that text does, so an operator can tell which wording an answer was given under
 * (`describe().prompt.version`).
 */
export const PROMPT_VERSION = '2026.11.1';

export const CLASS_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const OBJECT_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
/** keys / include entries: dotted paths whose segments start with a letter. */
export const FIELD_PATH_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,127}(\.[A-Za-z][A-Za-z0-9_]{0,127})*$/;
export const CORRELATION_ID_PATTERN = /^[A-Za-z0-9._-]+$/;
export const MAX_CORRELATION_ID_LENGTH = 128;

/** Always returned alongside an allowlist; never refused in keys. */
export const ALWAYS_KEEP_FIELDS = ['objectId', 'createdAt', 'updatedAt'] as const;
