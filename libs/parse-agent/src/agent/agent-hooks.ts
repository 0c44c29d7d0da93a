import type { AuthType } from '../core/agent-identity';
import type { ToolEnvelope } from '../core/envelope';
import {
  AccessDeniedError,
  AgentUnauthorizedError,
  ParseAgentConfigError,
  ParseAgentError,
} from '../core/errors';
import type { LlmResponseInfo } from '../ports/conversation';

/** The call a hook sees: which tool, with which arguments, for which agent. */
export interface ToolCallInfo {
  tool: string;
  /** The arguments as the caller sent them. Hooks must not change them. */
  args: Readonly<Record<string, unknown>>;
  /** The agent making the call (a sub-agent's calls reach its ancestors' hooks too). */
  agentId: string;
  agentDepth: number;
  authType: AuthType;
  correlationId?: string;
}

/** How a call that ran ended. */
export interface ToolCallOutcome {
  envelope: ToolEnvelope;
  durationMs: number;
}

/**
 * What a before-hook may return to refuse the call: the tool does not run, and the caller gets
 * `access_denied` (details.kind `hook_refused`) with `reason` in the message. Returning nothing
 * (or `{ allow: true }`) lets the call through.
 */
export interface HookDecision {
  allow: boolean;
  /** Shown to the caller (and so to the model): say why, without secrets. */
  reason?: string;
}

/** Runs before the tool, after every gate passed. May refuse (see HookDecision). */
export type BeforeToolCallHook = (
  call: ToolCallInfo,
) => void | HookDecision | Promise<void | HookDecision>;
/** Runs after a tool that ran, successful or not; cannot change the result. */
export type AfterToolCallHook = (call: ToolCallInfo, outcome: ToolCallOutcome) => void;
/** Where an error came from: a tool that ran and failed, or the language model's request. */
export type HookErrorContext =
  ({ source: 'tool' } & ToolCallInfo) | { source: 'llm'; agentId: string; correlationId?: string };
/** Runs when a tool that ran failed, or a conversation's model request failed. */
export type ErrorHook = (error: Error, context: HookErrorContext) => void;
/** Runs on each language model response in this agent's conversations (`ask`, `conversation`). */
export type LlmResponseHook = (response: LlmResponseInfo) => void;

/** Per-agent hooks, as the `hooks` agent option takes them (one function or several each). */
export interface AgentHooks {
  beforeToolCall?: BeforeToolCallHook | BeforeToolCallHook[];
  afterToolCall?: AfterToolCallHook | AfterToolCallHook[];
  onError?: ErrorHook | ErrorHook[];
  onLlmResponse?: LlmResponseHook | LlmResponseHook[];
}

interface HookLists {
  beforeToolCall: BeforeToolCallHook[];
  afterToolCall: AfterToolCallHook[];
  onError: ErrorHook[];
  onLlmResponse: LlmResponseHook[];
}

/**
 * One agent's hooks. Observing hooks (after, error, model response) cannot change an outcome: if
 * one throws, the error is logged and the others still run. A before-hook refuses by returning
 * `{ allow: false, reason }` or by throwing: a hook that fails refuses the call (fail closed).
 */
export class AgentHookSet {
  protected readonly lists: HookLists = {
    beforeToolCall: [],
    afterToolCall: [],
    onError: [],
    onLlmResponse: [],
  };

  /**
   * Adds every hook of `hooks` (checked first: a bad entry throws and adds none); the returned
   * function removes them again.
   */
  addAll(hooks: AgentHooks | undefined): () => void {
    if (hooks === undefined || hooks === null) return () => undefined;
    if (typeof hooks !== 'object' || Array.isArray(hooks)) {
      throw new ParseAgentConfigError(
        'hooks must be an object: { beforeToolCall, afterToolCall, onError, onLlmResponse }, each a function or an array of functions.',
      );
    }
    const pending: Array<[keyof HookLists, unknown]> = [];
    for (const [kind, value] of Object.entries(hooks)) {
      if (!(kind in this.lists)) {
        throw new ParseAgentConfigError(
          `hooks.${kind} is not a hook; use beforeToolCall, afterToolCall, onError or onLlmResponse.`,
        );
      }
      for (const hook of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
        if (typeof hook !== 'function') {
          throw new ParseAgentConfigError(
            `hooks.${kind} must be a function or an array of functions (got ${typeof hook}).`,
          );
        }
        pending.push([kind as keyof HookLists, hook]);
      }
    }
    const removers = pending.map(([kind, hook]) => this.add(kind, hook as never));
    return () => removers.forEach((remove) => remove());
  }

  /** Adds a hook; the returned function removes it. */
  add<K extends keyof HookLists>(kind: K, hook: HookLists[K][number]): () => void {
    if (typeof hook !== 'function') {
      throw new ParseAgentConfigError(`A ${kind} hook must be a function (got ${typeof hook}).`);
    }
    const list = this.lists[kind] as Array<typeof hook>;
    list.push(hook);
    return () => {
      const at = list.indexOf(hook);
      if (at >= 0) list.splice(at, 1);
    };
  }

  has(kind: keyof HookLists): boolean {
    return this.lists[kind].length > 0;
  }

  /** The refusal of the first before-hook that refuses, or undefined when all let it through. */
  async before(
    call: ToolCallInfo,
    warn: (message: string) => void,
  ): Promise<ParseAgentError | undefined> {
    for (const hook of [...this.lists.beforeToolCall]) {
      let decision: void | HookDecision;
      try {
        decision = await hook(call);
      } catch (error) {
        // A hook's own ParseAgentError (rate_limited, invalid_argument, ...) is its answer; an
        // unauthorized one ends the request as anywhere else. Anything else refuses, quietly.
        if (error instanceof AgentUnauthorizedError) throw error;
        if (error instanceof ParseAgentError) return error;
        warn(
          `a beforeToolCall hook failed on ${call.tool}, so the call was refused: ${(error as Error)?.stack ?? String(error)}`,
        );
        return hookRefusal(call.tool, 'the hook failed');
      }
      // A bare `false` (easy to write from JavaScript) refuses too: never read it as consent.
      if ((decision as unknown) === false) return hookRefusal(call.tool, undefined);
      if (decision && typeof decision === 'object' && decision.allow === false) {
        return hookRefusal(
          call.tool,
          typeof decision.reason === 'string' ? decision.reason : undefined,
        );
      }
    }
    return undefined;
  }

  after(call: ToolCallInfo, outcome: ToolCallOutcome, warn: (message: string) => void): void {
    for (const hook of [...this.lists.afterToolCall])
      observe(() => hook(call, outcome), 'afterToolCall', warn);
  }

  error(error: Error, context: HookErrorContext, warn: (message: string) => void): void {
    for (const hook of [...this.lists.onError])
      observe(() => hook(error, context), 'onError', warn);
  }

  llmResponse(response: LlmResponseInfo, warn: (message: string) => void): void {
    for (const hook of [...this.lists.onLlmResponse])
      observe(() => hook(response), 'onLlmResponse', warn);
  }
}

/** The refusal a before-hook's decision turns into. */
export function hookRefusal(tool: string, reason: string | undefined): AccessDeniedError {
  return new AccessDeniedError(
    `Tool '${tool}' was refused by this agent's beforeToolCall hook${reason ? `: ${reason}` : '.'}`,
    { kind: 'hook_refused' },
  );
}

/** Runs an observing hook; its failure (thrown or rejected) is logged, never propagated. */
function observe(run: () => unknown, kind: string, warn: (message: string) => void): void {
  const report = (error: unknown) =>
    warn(`an ${kind} hook failed (ignored): ${(error as Error)?.stack ?? String(error)}`);
  try {
    const result = run();
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).then(undefined, report);
    }
  } catch (error) {
    report(error);
  }
}

/** The before-hooks of a chain (nearest agent first); the first refusal wins. */
export async function runBeforeHooks(
  chain: readonly AgentHookSet[],
  call: ToolCallInfo,
  warn: (message: string) => void,
): Promise<ParseAgentError | undefined> {
  for (const set of chain) {
    const refusal = await set.before(call, warn);
    if (refusal) return refusal;
  }
  return undefined;
}

/** After a call that ran: every after-hook, then (when it failed) every onError hook. */
export function runAfterHooks(
  chain: readonly AgentHookSet[],
  call: ToolCallInfo,
  outcome: ToolCallOutcome,
  error: unknown,
  warn: (message: string) => void,
): void {
  for (const set of chain) set.after(call, outcome, warn);
  if (outcome.envelope.success) return;
  const failure = error instanceof Error ? error : new Error(String(error));
  for (const set of chain) set.error(failure, { source: 'tool', ...call }, warn);
}
