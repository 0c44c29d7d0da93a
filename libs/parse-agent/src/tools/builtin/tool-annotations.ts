import type { ToolAnnotations } from '../tool-definition';

/** Built-in read tools: they change nothing and the same call gives the same answer. */
export const READ_ONLY_TOOL: ToolAnnotations = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
});
