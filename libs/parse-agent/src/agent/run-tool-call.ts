import { instrumentDataPath } from './data-operation-events';
import { linkedAbort, type LinkedAbort } from '../core/linked-abort';
import { raceAbort } from '../core/race-abort';
import { failureFromError, success, type ToolEnvelope } from '../core/envelope';
import {
  AgentCancelledError,
  AgentUnauthorizedError,
  ParseAgentError,
  ToolTimeoutError,
} from '../core/errors';
import type { DataOperation, DataPath } from '../ports/data-path';
import type { AgentIdentity } from '../core/agent-identity';
import type { ElicitationChannel } from '../ports/elicitation-channel';
import { pointerCheckedWrites } from '../security/pointer-write-check';
import { RetrievalCall, type EmbeddingCallUsage } from '../retrieval/retrieval-call';
import type { ReadPolicy } from '../security/read-policy';
import {
  DEFAULT_ANALYTICS_SETTINGS,
  type ConfirmationRequest,
  type MutationAuditInput,
  type ToolAgent,
  type ToolContext,
} from '../tools/tool-context';
import { timeoutOf, type ToolDefinition } from '../tools/tool-definition';
import type { AgentServices, ExecuteOptions } from './agent-options';

/** One call past the gates: the tool, its arguments, and the agent's parts it runs with. */
export interface ToolRun {
  agent: ToolAgent;
  access: ReadPolicy;
  services: AgentServices;
  toolName: string;
  tool: ToolDefinition;
  args: Record<string, unknown>;
  options: ExecuteOptions;
  /** The agent's own signal, when something created it (cancel(), `signal`). */
  agentSignal?: AbortSignal;
  /** The agent's calls in flight, so cancel() reaches this one. */
  running: Set<LinkedAbort>;
  /** What the call reaches back to its agent for. */
  host: ToolRunHost;
  /** The before-hooks, run under the call's signal; resolves to their refusal, if any. */
  before?(): Promise<ParseAgentError | undefined>;
}

/** The agent's side of a call: confirmation, the mutation audit, warnings. */
export interface ToolRunHost {
  confirm(
    request: ConfirmationRequest,
    channel: ElicitationChannel | undefined,
    signal: AbortSignal,
  ): Promise<{ confirmed: boolean }>;
  audit(toolName: string, input: MutationAuditInput, confirmed: boolean | undefined): void;
  warn(message: string): void;
}

/**
 * How far a call got: stopped before it started (cancelled already), refused by a before-hook,
 * or ran (successfully or not).
 */
export type ToolRunStage = 'not_started' | 'before_hooks' | 'ran';

export interface ToolRunResult {
  envelope: ToolEnvelope;
  /** What the call spent on embeddings, when it embedded anything. */
  embeddings?: EmbeddingCallUsage;
  stage: ToolRunStage;
  /** What the call failed with; absent on success. */
  error?: unknown;
}

/**
 * Runs the tool's handler under one AbortSignal (the agent's cancel, the caller's signal, the
 * tool's timeout) with its ToolContext, and turns the outcome into the wire envelope. Only an
 * AgentUnauthorizedError propagates (the transport answers 401).
 */
export async function runToolCall(run: ToolRun): Promise<ToolRunResult> {
  const { toolName, tool, args, options, agent } = run;
  if (run.agentSignal?.aborted || options.signal?.aborted) {
    const error = abortError([run.agentSignal, options.signal]);
    return { envelope: failureFromError(error, toolName), stage: 'not_started', error };
  }
  const seconds = timeoutOf(tool);
  const call = linkedAbort([run.agentSignal, options.signal]);
  run.running.add(call);
  const timer = setTimeout(
    () => call.abort(new ToolTimeoutError(toolName, seconds)),
    seconds * 1000,
  );
  const signal = call.signal;
  const services = run.services;
  // Each path the call binds leaves data-operation events (and slow-query lines) when asked for.
  const observed = services.events.dataObserved || services.slowQueryMs !== undefined;
  const bound = <T extends DataPath>(path: T): T =>
    observed
      ? instrumentDataPath(path, {
          events: services.events,
          agent,
          tool: toolName,
          slowQueryMs: services.slowQueryMs,
          warn: (message) => run.host.warn(message),
        })
      : path;
  const router = {
    pathFor: (operation: DataOperation, identity: AgentIdentity) =>
      bound(services.data.pathFor(operation, identity)),
  };
  let readPath: ToolContext['data'] | undefined;
  let writePath: ToolContext['data'] | undefined;
  let confirmed: boolean | undefined;
  let analytics: ToolContext['analytics'] | undefined;
  const retrieval = run.services.retrieval ? new RetrievalCall(run.services.retrieval) : undefined;
  const context: ToolContext = {
    agent,
    access: run.access,
    // Bound on first use: tools that read no data never resolve a path.
    get data() {
      return (readPath ??= router.pathFor('find', this.agent));
    },
    // Every write links only objects the agent can read: the check reads through the agent's
    // own read path, under its read policy.
    get writeData() {
      return (writePath ??= pointerCheckedWrites(
        router.pathFor('write', this.agent),
        run.access,
        () => context.data,
      ));
    },
    dataFor: (operation) =>
      operation === 'write' ? context.writeData : router.pathFor(operation, agent),
    timeoutMs: seconds * 1000,
    // Merged on first use: most tools never read the analytics settings.
    get analytics() {
      return (analytics ??= { ...DEFAULT_ANALYTICS_SETTINGS, ...run.services.analytics });
    },
    signal,
    reportProgress: (u) => agent.reportProgress(u),
    confirm: async (request) => {
      const outcome = await run.host.confirm(request, options.elicitation, signal);
      confirmed = outcome.confirmed;
      return outcome;
    },
    audit: (input) => run.host.audit(toolName, input, confirmed),
    retrieval,
  };
  let stage: ToolRunStage = 'before_hooks';
  try {
    if (run.before) {
      const refusal = await raceAbort(run.before(), signal);
      if (refusal) return { envelope: failureFromError(refusal, toolName), stage, error: refusal };
    }
    stage = 'ran';
    const data = await raceAbort(Promise.resolve(tool.handler(args, context)), signal);
    if (signal.aborted) throw abortError([signal]);
    return { envelope: success(data), stage, ...spent(retrieval) };
  } catch (error) {
    // Unauthorized is not a tool failure: it ends the request (HTTP 401) wherever it is raised.
    if (error instanceof AgentUnauthorizedError) throw error;
    const cause =
      signal.aborted && !(error instanceof ParseAgentError) ? abortError([signal]) : error;
    if (!(cause instanceof ParseAgentError)) {
      run.host.warn(`${toolName} failed: ${(cause as Error)?.stack ?? String(cause)}`);
    }
    // A hook cut short by cancellation or the timeout counts as a call that did not run.
    return {
      envelope: failureFromError(cause, toolName),
      stage,
      error: cause,
      ...spent(retrieval),
    };
  } finally {
    clearTimeout(timer);
    call.dispose();
    run.running.delete(call);
  }
}

function spent(retrieval: RetrievalCall | undefined): { embeddings?: EmbeddingCallUsage } {
  return retrieval?.usage.calls ? { embeddings: { ...retrieval.usage } } : {};
}

function abortError(signals: ReadonlyArray<AbortSignal | undefined>): ParseAgentError {
  const reason: unknown = signals.find((s) => s?.aborted)?.reason;
  if (reason instanceof ParseAgentError) return reason;
  return new AgentCancelledError(typeof reason === 'string' ? reason : undefined);
}
