import type { ToolAnnotations } from '../tool-definition';

/** Built-in read tools: they change nothing and the same call gives the same answer. */
export const READ_ONLY_TOOL: ToolAnnotations = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
});

/** Adds data and never removes or overwrites it; repeating the call adds again. */
export const CREATING_TOOL: ToolAnnotations = Object.freeze({
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
});

/** Overwrites or removes data; repeating the same call has no further effect. */
export const DESTRUCTIVE_IDEMPOTENT_TOOL: ToolAnnotations = Object.freeze({
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
});

/** Runs application code that may change anything its author wrote it to change. */
export const DOMAIN_ACTION_TOOL: ToolAnnotations = Object.freeze({
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
});

/** Hints for a registered tool that declares none: read-only tiers read, the others may change data. */
export function defaultAnnotations(permission: 'readonly' | 'write' | 'admin'): ToolAnnotations {
  return permission === 'readonly' ? READ_ONLY_TOOL : DOMAIN_ACTION_TOOL;
}
