/** Permission tiers, limits and name patterns: the numbers the agent's behaviour is built on. */

export type PermissionLevel = 'readonly' | 'write' | 'admin';

export const PERMISSION_HIERARCHY: Readonly<Record<PermissionLevel, number>> = Object.freeze({
  readonly: 0,
  write: 1,
  admin: 2,
});

export const PERMISSION_LEVEL_NAMES = Object.keys(PERMISSION_HIERARCHY) as PermissionLevel[];

export function isPermissionLevel(value: unknown): value is PermissionLevel {
  return typeof value === 'string' && value in PERMISSION_HIERARCHY;
}

/** Whether `level` reaches `required` (tiers are cumulative). */
export function permits(level: PermissionLevel, required: PermissionLevel): boolean {
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
