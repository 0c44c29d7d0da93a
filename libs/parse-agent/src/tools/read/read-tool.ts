import { ParseAgentConfigError } from '../../core/errors';
import { ROW_OPERATIONS } from '../../ports/data-path';
import type { ToolContext } from '../tool-context';
import type { JsonSchema, ToolDefinition } from '../tool-definition';
import type { ArgumentsOf } from '../schema-types';
import { READ_ONLY_TOOL } from '../builtin/tool-annotations';
import { PolicedReader } from './policed-reader';
import { stampingReader, type SourceStamp } from './source-provenance';

/** The raw data-path members of a ToolContext, which a read tool never gets. */
const RAW_MEMBERS = ['data', 'dataFor', 'writeData'] as const;

/**
 * What a read tool's handler receives: the calling agent, its read policy and a `PolicedReader`,
 * never a data path. Every row it can obtain has been gated, planned and redacted.
 */
export interface ReadToolContext extends Omit<
  ToolContext,
  (typeof RAW_MEMBERS)[number] | 'confirm' | 'audit'
> {
  /** Reads through the agent's read policy (gate, plan, read, redact in one place). */
  read: PolicedReader;
}

/**
 * A read tool as declared: a ToolDefinition whose handler takes a ReadToolContext. Its tier is
 * `readonly` and its annotations default to the read-only hints.
 */
export interface ReadToolDefinition<TArgs, TResult = unknown> extends Omit<
  ToolDefinition<TArgs, TResult>,
  'handler' | 'permission'
> {
  handler: (args: TArgs, context: ReadToolContext) => Promise<TResult> | TResult;
}

const POLICED = new WeakSet<object>();

/**
 * A base for a policed context to inherit: reaching for a raw path (or another member the policed
 * view leaves out) is a bug in the tool, refused loudly at runtime (with `explain(member)`) as the
 * type already refuses it at compile time.
 */
export function rawPathGuard(
  explain: (member: string) => string,
  members: readonly string[] = RAW_MEMBERS,
): object {
  return Object.freeze(
    Object.defineProperties(
      {},
      Object.fromEntries(
        members.map((name) => [
          name,
          {
            get(): never {
              throw new ParseAgentConfigError(explain(name));
            },
          },
        ]),
      ),
    ),
  );
}

/** The base every read tool's context inherits. */
const RAW_GUARD = rawPathGuard(
  (name) =>
    `A read tool asked for context.${name}: read tools read through context.read (the PolicedReader), which gates, plans and redacts every read.`,
);

/**
 * A policed view of a call's context: a reader in place of the raw paths, which throw when asked
 * for (`base`, a `rawPathGuard`, says how).
 */
export function readContext(
  context: ToolContext,
  base: object = RAW_GUARD,
  provenance?: SourceStamp,
): ReadToolContext {
  const read = new PolicedReader({
    access: context.access,
    // Row reads share the call's lazily bound read path; other operations are routed per operation.
    pathFor: (operation) =>
      ROW_OPERATIONS.has(operation) ? context.data : context.dataFor(operation),
    signal: context.signal,
    timeoutMs: context.timeoutMs,
    analytics: context.analytics,
  });
  const view = Object.create(base) as ReadToolContext;
  view.agent = context.agent;
  view.access = context.access;
  view.read = provenance ? stampingReader(read, provenance) : read;
  view.timeoutMs = context.timeoutMs;
  view.analytics = context.analytics;
  view.signal = context.signal;
  view.reportProgress = (update) => context.reportProgress(update);
  view.retrieval = context.retrieval;
  return view;
}

/**
 * Declares a read tool: its handler gets a `ReadToolContext` (the policed reader, no data path).
 * Every built-in tool that reads data is declared with it; a spec holds them to it. The handler's
 * arguments are the type of what `inputSchema` accepts (`ArgumentsOf`), so the schema is their
 * one statement.
 */
export function readTool<const S extends JsonSchema, TResult = unknown>(
  definition: ReadToolDefinition<ArgumentsOf<S>, TResult> & { inputSchema: S },
): ToolDefinition<ArgumentsOf<S>, TResult> {
  type TArgs = ArgumentsOf<S>;
  const { handler, ...rest } = definition;
  // Provenance is stamped for the agents that asked for it, naming this tool (a write tool's own
  // reads, such as call_method's target row, are never stamped: they feed the tool, not the model).
  const stamp: SourceStamp = { tool: rest.name };
  const policed: ToolDefinition<TArgs, TResult>['handler'] = (args, context) =>
    handler(
      args,
      readContext(context, RAW_GUARD, context.agent.sourceProvenance ? stamp : undefined),
    );
  // The handler is the mark: registries copy definitions, never their handlers.
  POLICED.add(policed);
  return { permission: 'readonly', annotations: READ_ONLY_TOOL, ...rest, handler: policed };
}

/** Whether a tool was declared with `readTool` (its handler never sees a raw data path). */
export function isReadTool(tool: Pick<ToolDefinition, 'handler'>): boolean {
  return POLICED.has(tool.handler);
}
