import type { PermissionLevel } from '../core/constants';
import { rawPathGuard } from './read/read-tool';
import type { ToolContext } from './tool-context';
import type { JsonSchema, McpIcon, ToolAnnotations, ToolDefinition } from './tool-definition';
import { writeContext, type WriteToolContext } from './write/write-tool';

/**
 * What an application's tool receives by default (`access: 'policed'`): the agent's own policed
 * data access, never a data path. `read` is the PolicedReader the built-in read tools use (the
 * agent's class gate, allowlists, tenant scope, canonical filter and filters, redaction); `write`
 * is the PolicedWriter the built-in write tools use (the same WritePolicy, row checks,
 * confirmation of deletes and audit), at the agent's identity. Asking for `data`, `dataFor` or
 * `writeData` throws with what to use instead.
 */
export interface PolicedToolContext extends WriteToolContext {
  /** Asks the person to confirm (MCP elicitation), as ToolContext.confirm does. */
  confirm: ToolContext['confirm'];
}

/** Every registration setting but the handler and how it reaches data. */
interface ToolRegistrationSettings {
  name: string;
  description: string;
  inputSchema?: JsonSchema;
  outputSchema?: JsonSchema;
  /** Lowest tier that may call the tool (default readonly). */
  permission?: PermissionLevel;
  category?: string;
  timeout?: number;
  annotations?: ToolAnnotations;
  title?: string;
  icons?: McpIcon[];
  clientSafe?: boolean;
}

/** A tool with the agent's own policed data access: the default. */
export interface PolicedToolRegistration<
  TArgs = Record<string, unknown>,
  TResult = unknown,
> extends ToolRegistrationSettings {
  access?: 'policed';
  handler: (args: TArgs, context: PolicedToolContext) => Promise<TResult> | TResult;
}

/**
 * A tool that reads and writes raw data paths (`context.data`, `dataFor`, `writeData`). Only
 * master-key agents are offered it, so those paths carry the master key; session-token, aclUser
 * and aclRole agents never see it listed, and a call from one is refused.
 */
export interface MasterToolRegistration<
  TArgs = Record<string, unknown>,
  TResult = unknown,
> extends ToolRegistrationSettings {
  access: 'master';
  handler: (args: TArgs, context: ToolContext) => Promise<TResult> | TResult;
}

/** What the application passes to ToolRegistry.register(). */
export type ToolRegistration<TArgs = Record<string, unknown>, TResult = unknown> =
  PolicedToolRegistration<TArgs, TResult> | MasterToolRegistration<TArgs, TResult>;

/**
 * The handler the registry stores for a policed tool: each call's context is cut down to the
 * policed view before the application's handler sees it.
 */
export function policedHandler<TArgs, TResult>(
  handler: PolicedToolRegistration<TArgs, TResult>['handler'],
  tool: Pick<ToolDefinition, 'name' | 'permission' | 'confirm'>,
): (args: TArgs, context: ToolContext) => Promise<TResult> | TResult {
  return (args, context) => {
    const view = writeContext(context, tool, POLICED_GUARD) as PolicedToolContext;
    view.confirm = (request) => context.confirm(request);
    return handler(args, view);
  };
}

/** What a policed tool is told when it reaches for a raw path. */
const POLICED_GUARD = rawPathGuard(
  (name) =>
    `This tool asked for context.${name}, a raw data path: tools registered without access: 'master' read through context.read and write through context.write, at the calling agent's own identity and policy. Declare access: 'master' for raw paths (then only master-key agents are offered the tool).`,
);
