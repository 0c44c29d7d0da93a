import { rawPathGuard, readContext, type ReadToolContext } from '../read/read-tool';
import type { ToolContext } from '../tool-context';
import type { JsonSchema, ToolDefinition } from '../tool-definition';
import type { ArgumentsOf } from '../schema-types';
import { PolicedWriter } from './policed-writer';

/**
 * What a write tool's handler receives: the calling agent, its read policy, the `PolicedReader`
 * and the `PolicedWriter`, never a data path, a raw confirmation or a raw audit: the writer asks
 * and records for it.
 */
export interface WriteToolContext extends ReadToolContext {
  /** Writes through the agent's write policy (plan, row check, confirmation, write, audit). */
  write: PolicedWriter;
}

/**
 * A write tool as declared: a ToolDefinition whose handler takes a WriteToolContext. Its
 * `confirm` says which of its writes ask a person first.
 */
export interface WriteToolDefinition<TArgs, TResult = unknown> extends Omit<
  ToolDefinition<TArgs, TResult>,
  'handler'
> {
  handler: (args: TArgs, context: WriteToolContext) => Promise<TResult> | TResult;
}

/** What the writer of a tool is told about it. */
type WritingTool = Pick<ToolDefinition, 'name' | 'permission' | 'confirm'>;

const WRITE_TOOLS = new WeakSet<object>();

/** The base every write tool's context inherits. */
const WRITE_GUARD = rawPathGuard(
  (name) =>
    `A write tool asked for context.${name}: write tools write through context.write (the PolicedWriter: plan, row check, confirmation, write, audit) and read through context.read.`,
  ['data', 'dataFor', 'writeData', 'confirm', 'audit'],
);

/**
 * A policed view of a call's context with a writer for `tool` (its name, tier and declared
 * confirmation); `base`, a `rawPathGuard`, says what to use when a raw member is asked for.
 */
export function writeContext(
  context: ToolContext,
  tool: WritingTool,
  base: object = WRITE_GUARD,
): WriteToolContext {
  const view = readContext(context, base) as WriteToolContext;
  view.write = new PolicedWriter({
    access: context.access,
    read: view.read,
    path: () => context.writeData,
    signal: context.signal,
    toolName: tool.name,
    toolPermission: tool.permission,
    confirmation: tool.confirm,
    confirm: (request) => context.confirm(request),
    audit: (event) => context.audit(event),
  });
  return view;
}

/**
 * Declares a write tool: its handler gets a `WriteToolContext` (the policed reader and writer,
 * no data path). Every built-in tool that changes data is declared with it; a spec holds them to
 * it. The handler's arguments are the type of what `inputSchema` accepts (`ArgumentsOf`).
 */
export function writeTool<const S extends JsonSchema, TResult = unknown>(
  definition: WriteToolDefinition<ArgumentsOf<S>, TResult> & { inputSchema: S },
): ToolDefinition<ArgumentsOf<S>, TResult> {
  type TArgs = ArgumentsOf<S>;
  const { handler, ...rest } = definition;
  const policed: ToolDefinition<TArgs, TResult>['handler'] = (args, context) =>
    handler(args, writeContext(context, rest));
  // The handler is the mark: registries copy definitions, never their handlers.
  WRITE_TOOLS.add(policed);
  return { ...rest, handler: policed };
}

/** Whether a tool was declared with `writeTool` (its handler never sees a raw data path). */
export function isWriteTool(tool: Pick<ToolDefinition, 'handler'>): boolean {
  return WRITE_TOOLS.has(tool.handler);
}
