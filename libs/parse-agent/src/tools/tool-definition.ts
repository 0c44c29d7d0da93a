import type { PermissionLevel } from '../core/constants';
import type { ToolContext } from './tool-context';

export type JsonSchema = Record<string, unknown>;

/** A tool agents can call: built-in or registered by the application. */
export interface ToolDefinition<TArgs = Record<string, unknown>, TResult = unknown> {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** When set, MCP results also carry `structuredContent` matching it. */
  outputSchema?: JsonSchema;
  /** Lowest permission tier that may use the tool. */
  permission: PermissionLevel;
  category: string;
  /** Seconds before the call is aborted. */
  timeout?: number;
  /** Registered tools marked safe for client (session-token, no master key) deployments. */
  clientSafe?: boolean;
  handler: (args: TArgs, context: ToolContext) => Promise<TResult> | TResult;
}

/** What the application passes to ToolRegistry.register(). */
export interface ToolRegistration<TArgs = Record<string, unknown>, TResult = unknown> {
  name: string;
  description: string;
  inputSchema?: JsonSchema;
  outputSchema?: JsonSchema;
  permission?: PermissionLevel;
  category?: string;
  timeout?: number;
  clientSafe?: boolean;
  handler: (args: TArgs, context: ToolContext) => Promise<TResult> | TResult;
}
