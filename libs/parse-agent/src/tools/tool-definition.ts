import type { PermissionLevel } from '../core/constants';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import type { DataOperation } from '../ports/data-path';
import type { ToolEnvGate } from './env-gates';
import type { ToolContext } from './tool-context';
import type { ToolConfirmation } from './write/write-confirmation';

export type JsonSchema = Record<string, unknown>;

/** How an application's tool reaches data: see ToolDefinition.access. */
export type ToolAccess = 'policed' | 'master';

/** Seconds a tool may run when its definition names no timeout. */
export const DEFAULT_TOOL_TIMEOUT = 30;

/** MCP tool annotations: hints for clients about what a call does. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** An icon a client may show for a tool or the server (MCP 2025-11-25). */
export interface McpIcon {
  /** An https: URL or a data: URI. */
  src: string;
  mimeType?: string;
  /** e.g. `['48x48']`, or `['any']` for scalable formats. */
  sizes?: string[];
  theme?: 'light' | 'dark';
}

/**
 * A tool agents can call: built-in or registered by the application. Everything the library knows
 * about a tool lives here; nothing else lists tool names.
 */
export interface ToolDefinition<TArgs = Record<string, unknown>, TResult = unknown> {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** When set, MCP results also carry `structuredContent` matching it. */
  outputSchema?: JsonSchema;
  /** Lowest permission tier that may use the tool. */
  permission: PermissionLevel;
  category: string;
  /** Seconds before the call is aborted (default 30). */
  timeout?: number;
  /** Operator switches the tool needs besides its tier (see ENV_GATES). */
  envGate?: ToolEnvGate;
  /**
   * The data operation the tool cannot work without (analytics, explain). An agent for which no
   * configured data path serves it is not offered the tool; a call anyway is refused with what to
   * configure.
   */
  dataOperation?: DataOperation;
  /**
   * Whether the tool is offered at all, given the registered models (semantic_search: only when
   * some class is `@AgentSearchable`). Absent: always.
   */
  available?: (metadata: MetadataRegistry) => boolean;
  /**
   * Results over the response cap. 'trim-rows': the result is cut down to what fits (rows in
   * `results`/`samples`/`groups`/`values`, objects in `objects`, one `object`): the heaviest field
   * left out, the leading rows kept, and `_truncated` saying what happened and how to ask for the
   * rest with the tool's own arguments. 'refuse' (the default but for query_class): a refusal that
   * names the heaviest fields and the tool's arguments that ask for less.
   */
  oversize?: 'refuse' | 'trim-rows';
  annotations?: ToolAnnotations;
  /** Human-readable name for clients' menus (MCP 2025-06-18+); `annotations.title` is the fallback. */
  title?: string;
  /** Icons for clients' menus (MCP 2025-11-25). */
  icons?: McpIcon[];
  /** Registered tools marked safe for client (session-token, no master key) deployments. */
  clientSafe?: boolean;
  /**
   * How a registered tool reaches data (built-in tools leave it unset). `policed` (the default
   * for registrations): its handler gets the agent's policed reader and writer, no data path.
   * `master`: raw data paths; only master-key agents are offered the tool or may call it.
   */
  access?: ToolAccess;
  /**
   * Which writes of the tool ask a person first (MCP elicitation), run by the policed writer
   * after every check and before the write: delete_object and delete_class ask for deletes,
   * call_method for admin methods; an application's policed tool asks before deletes.
   */
  confirm?: ToolConfirmation;
  handler: (args: TArgs, context: ToolContext) => Promise<TResult> | TResult;
}

/** Seconds the tool may run. */
export function timeoutOf(tool: Pick<ToolDefinition, 'timeout'>): number {
  return tool.timeout ?? DEFAULT_TOOL_TIMEOUT;
}
