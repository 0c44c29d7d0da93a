import type { ModelClass } from '../metadata/metadata.types';
import type { Where } from '../query/constraint-translator';
import { envGateRefusal } from '../tools/env-gates';
import type { ConfirmationRequest, MutationAuditInput, ToolAgent } from '../tools/tool-context';
import type { ElicitationChannel } from '../ports/elicitation-channel';
import type { DataOperation } from '../ports/data-path';
import type { ToolDefinition } from '../tools/tool-definition';
import type { ToolEnvelope } from '../core/envelope';
import type { AbandonedStreamEvent } from '../core/agent-events';
import { AccessDeniedError, AgentValidationError, ParseAgentError } from '../core/errors';
import type {
  AgentConversation,
  ConversationAnswer,
  ConversationOptions,
  LlmResponseInfo,
} from '../ports/conversation';
import type {
  AgentAskOptions,
  AgentOwnOptions,
  AgentServices,
  DescribeOptions,
  ExecuteOptions,
  PermitDecision,
  ToolDefinitionsOptions,
} from './agent-options';
import { clientCeilingRefusal, permitDecision, permitsTool, toolRefusal } from './agent-gates';
import {
  describeAgent,
  describeAgentFor,
  describeAgentText,
  formatToolDefinitions,
} from './agent-introspection';
import { confirmDestructiveCall } from './agent-confirmation';
import { AskSession, openConversation } from './agent-conversation';
import { runToolCall, type ToolRunHost, type ToolRunResult } from './run-tool-call';
import { AgentHookSet, runAfterHooks, runBeforeHooks, type AgentHooks } from './agent-hooks';
import type { OperationLogEntry } from './agent-observability';
import { AgentCallRecorder } from './agent-call-recorder';
import { AgentCore } from './agent-core';
import { canaryHits } from './prompt-canaries';
import { failureFromError } from '../core/envelope';
import {
  approvalNeed,
  ApprovalRefusedError,
  awaitApproval,
  type ApprovalNeed,
} from './agent-approval';
import {
  resolveImpersonation,
  revokeImpersonation,
  type ImpersonateOptions,
  type ImpersonationTarget,
  type ResolvedImpersonation,
} from './agent-impersonation';

export type {
  AgentAskOptions,
  AgentServices,
  DescribeOptions,
  ExecuteOptions,
  PermitDecision,
  ToolDefinitionsOptions,
} from './agent-options';

export interface AgentOptions extends AgentOwnOptions {
  /**
   * Makes this agent a sub-agent of `parent` (see `subAgent()`): it keeps the parent's identity
   * and can only narrow what the parent may do.
   */
  parent?: ParseAgent;
}

/**
 * An agent acting for one principal (a user session or the master key), limited to a permission
 * tier, tool and class filters, per-class filters and a tenant. `execute()` never throws for tool
 * failures: it resolves to the wire envelope. Its parts: option resolution
 * (resolve-agent-options), gates (agent-gates), introspection, the tool run (run-tool-call),
 * confirmation, conversations, hooks, and what a call leaves behind (agent-call-recorder).
 */
export class ParseAgent extends AgentCore implements ToolAgent {
  declare protected readonly parentAgent?: ParseAgent;
  /** The conversation `ask()` continues with `reset: false` (created on first ask). */
  protected askSession?: AskSession;
  /** Which data operations a configured path serves for this identity (see dataReachable). */
  protected servedOperations?: Map<DataOperation, boolean>;
  /** This agent's own hooks (created on first use). */
  protected ownHooks?: AgentHookSet;
  /** What a call reaches back for (confirmation, mutation audit, warnings); made on first use. */
  protected runHost?: ToolRunHost;
  /** What each call leaves behind: events, the operation log, security and audit lines. */
  protected readonly recorder: AgentCallRecorder;

  constructor(options: AgentOptions, services: AgentServices) {
    super(options, services);
    if (options.hooks !== undefined) (this.ownHooks = new AgentHookSet()).addAll(options.hooks);
    this.recorder = new AgentCallRecorder(this, this.observability, services.events, {
      filters: { classes: this.classFilter, tools: this.toolFilter, methods: this.methodFilter },
      agentFilters: this.filters,
    });
  }

  /**
   * Creates a sub-agent, one level deeper: the parent's identity (only a master-key parent may
   * hand down another), and the same or narrower permissions, tools, methods, classes, filters,
   * tenant and switches. Anything wider throws at construction.
   */
  subAgent(options: Omit<AgentOptions, 'parent'> = {}): ParseAgent {
    return new ParseAgent({ ...options, parent: this }, this.services);
  }

  /**
   * Acts as a `_User` from now on, with a real session of theirs: an active one found with the
   * master key, or (`mint: true`) a restricted one created for 15 minutes and revoked by
   * `stopImpersonating()`. Parse Server then applies that user's ACL, CLP and protectedFields
   * itself. Only an agent built with the master key may impersonate; anything but a `_User` is
   * refused; no session is a refusal, never a wider identity. On any failure the agent is exactly
   * as it was. Calls in flight must finish first.
   */
  async impersonate(
    user: ImpersonationTarget,
    options: Omit<ImpersonateOptions, 'user'> & { signal?: AbortSignal } = {},
  ): Promise<this> {
    this.assertMayImpersonate('impersonate');
    const next = await resolveImpersonation(
      this.services.data,
      this.agentId,
      { user, mint: options.mint, label: options.label },
      options.signal,
    );
    // Resolved while no call could start with a half-changed identity; check again, then switch.
    this.assertMayImpersonate('impersonate');
    const previous = this.currentImpersonation;
    this.rebind(next);
    this.recorder.impersonation('started', next);
    if (previous) await this.revokeQuietly(previous);
    return this;
  }

  /** Back to the master key; a session minted for the impersonation is revoked. */
  async stopImpersonating(): Promise<this> {
    const current = this.currentImpersonation;
    if (!current) return this;
    this.assertMayImpersonate('stopImpersonating');
    this.rebind(undefined);
    this.recorder.impersonation('stopped', current);
    await this.revokeQuietly(current);
    return this;
  }

  protected assertMayImpersonate(action: string): void {
    if (!this.baseMasterKey) {
      throw new AccessDeniedError(
        `${action}: only an agent created with the master key may impersonate; this one acts for ${this.authType}. Create the agent without sessionToken, aclUser or aclRole.`,
      );
    }
    if (this.running?.size) {
      throw new AgentValidationError(
        `${action}: ${this.running.size} call(s) of this agent are still running; wait for them before changing whom it acts for.`,
      );
    }
  }

  protected rebind(next: ResolvedImpersonation | undefined): void {
    this.bindImpersonation(next);
    this.servedOperations = undefined;
  }

  protected async revokeQuietly(previous: ResolvedImpersonation): Promise<void> {
    try {
      await revokeImpersonation(this.services.data, this.agentId, previous);
    } catch (error) {
      this.warn(
        `stopImpersonating: could not revoke the session minted for _User ${previous.user} (${(error as Error)?.message ?? String(error)}); it expires on its own within 15 minutes.`,
      );
    }
  }

  /**
   * Tools this agent may call: tier tools and registered tools at or below its tier, minus
   * filters, then (client mode) minus tools that need the master key, and raw CRUD tools unless
   * allowMutations. No step widens what the previous one allowed.
   */
  allowedTools(): string[] {
    return this.services.tools
      .list()
      .filter((t) => this.permitsTool(t) && this.dataReachable(t))
      .map((t) => t.name);
  }

  /**
   * Whether a configured data path serves the tool's data operation for this agent: a tool that
   * could only fail (aggregate for a session agent with Parse REST alone) is not offered. Asked
   * once per operation for this agent's identity; a call anyway still gets the router's refusal.
   */
  protected dataReachable(tool: ToolDefinition): boolean {
    if (tool.available && !tool.available(this.services.metadata)) return false;
    const operation = tool.dataOperation;
    if (!operation) return true;
    const served = (this.servedOperations ??= new Map());
    let answer = served.get(operation);
    if (answer === undefined) {
      answer = this.services.data.serves(operation, this);
      served.set(operation, answer);
    }
    return answer;
  }

  /** One tool through the gates of allowedTools() (a call checks only the tool it runs). */
  protected permitsTool(tool: ToolDefinition): boolean {
    return permitsTool(this, this.toolFilter, tool);
  }

  /** Why a tool is beyond this agent's client-mode ceiling, or undefined. */
  protected clientCeilingRefusal(tool: ToolDefinition): string | undefined {
    return clientCeilingRefusal(this, tool);
  }

  protected refusal(
    toolName: string,
    tool: ToolDefinition | undefined,
  ): ParseAgentError | undefined {
    return toolRefusal(this, this.toolFilter, toolName, tool);
  }

  /** Definitions of the allowed tools, in MCP shape or an LLM provider's. */
  toolDefinitions(
    options: ToolDefinitionsOptions = {},
  ): Array<ToolDefinition & Record<string, unknown>> {
    const allowed = new Set(this.allowedTools());
    const tools = this.services.tools.list().filter((t) => allowed.has(t.name));
    return formatToolDefinitions(tools, options);
  }

  /**
   * Would this agent be allowed to run the tool (on the class, the agent method)? Walks the same
   * gates as a call, in the same order, without I/O or side effects. `reason` uses the audit
   * vocabulary (unknown_tool, permission_denied, tool_filtered, access_denied, hidden_class,
   * class_filter, tenant_scope, unknown_method, invalid_configuration when no configured data path
   * serves the tool for this agent); `denied_at` names the gate.
   */
  wouldPermit(
    toolName: string,
    options: { className?: string | ModelClass; methodName?: string } = {},
  ): PermitDecision {
    return permitDecision(this, toolName, options, {
      tool: this.services.tools.get(toolName),
      permits: (tool) => this.permitsTool(tool),
      refusal: (name, tool) => this.refusal(name, tool),
      dataReachable: (tool) => this.dataReachable(tool),
      metadata: this.services.metadata,
    });
  }

  /** The per-agent filter this agent applies to a class (its own entry ANDed with `default`). */
  filterFor(cls: string | ModelClass): Where | undefined {
    return this.access.filterFor(this.services.metadata.resolveClassName(cls));
  }

  /**
   * Every layer that gates this agent, for operators (never sent to the model): identity (a
   * session token shows only as a fingerprint), tier, tenant, class/tool/method filters with the
   * effective lists, per-agent filters by field name (values stay out), hidden classes, a summary
   * per registered class, strict modes and the correlation id. `{ format: 'text' }` gives the
   * same as readable lines for a log or a terminal.
   */
  describe(options?: DescribeOptions & { format?: 'json' }): Record<string, unknown>;
  describe(options: DescribeOptions & { format: 'text' }): string;
  describe(options: DescribeOptions = {}): Record<string, unknown> | string {
    const described = describeAgent(
      this,
      {
        metadata: this.services.metadata,
        toolFilter: this.toolFilter,
        toolProfile: this.toolProfile,
        classFilter: this.classFilter,
        methodFilter: this.methodFilter,
        filters: this.filters,
        strictModes: this.strictModes,
      },
      (className) => this.describeFor(className),
    );
    return options.format === 'text' ? describeAgentText(described) : described;
  }

  /** What this agent sees of one class: access, tenant binding, allowlist, filters. */
  describeFor(cls: string | ModelClass): Record<string, unknown> {
    return describeAgentFor(this, this.services.metadata, cls);
  }

  /**
   * Opens a conversation in which a language model answers questions with this agent's tools,
   * under this agent's identity and limits. Needs a conversation factory in the services
   * (ParseAgentFactory and the CLI provide one).
   */
  conversation(options: ConversationOptions = {}): AgentConversation {
    return openConversation(this, this.services.conversations, options);
  }

  /**
   * Asks a language model a question it answers with this agent's tools. Starts a fresh history
   * unless `reset: false`, which continues the agent's previous question. Conversation settings
   * (`llm`, `maxIterations`, ...) open a new conversation, so they cannot be combined with
   * `reset: false`.
   */
  ask(question: string, options: AgentAskOptions = {}): Promise<ConversationAnswer> {
    this.askSession ??= new AskSession((settings) => this.conversation(settings));
    return this.askSession.ask(question, options);
  }

  /**
   * Runs a tool and resolves to the wire envelope; never rejects for tool failures. Only an
   * AgentUnauthorizedError raised by a tool (or a beforeToolCall hook) propagates (the transport
   * answers 401).
   */
  execute(
    toolName: string,
    args: Record<string, unknown> = {},
    options: ExecuteOptions = {},
  ): Promise<ToolEnvelope> {
    return this.runTool(toolName, this.services.tools.get(toolName), args, options);
  }

  /**
   * `execute()` for a tool the caller has already looked up in the agent's tool registry (the MCP
   * dispatcher does, to answer an unknown name with a protocol error): the same gates, run and
   * audit, without a second lookup.
   *
   * @internal
   */
  executeTool(
    tool: ToolDefinition,
    args: Record<string, unknown> = {},
    options: ExecuteOptions = {},
  ): Promise<ToolEnvelope> {
    return this.runTool(tool.name, tool, args, options);
  }

  /** One call: rate limit, gates, the run, the audit (an undefined `tool` is an unknown name). */
  protected async runTool(
    toolName: string,
    tool: ToolDefinition | undefined,
    args: Record<string, unknown>,
    options: ExecuteOptions,
  ): Promise<ToolEnvelope> {
    const started = Date.now();
    try {
      await this.consumeRateLimit();
    } catch (error) {
      return this.recorder.refused(toolName, args, error, started);
    }
    const refused = this.callRefusal(toolName, tool, args);
    if (refused || !tool) return this.recorder.refused(toolName, args, refused, started);
    const need = approvalNeed(this.approvals, tool, args, this.access);
    const unapproved = need && (await this.approve(toolName, need, options));
    if (unapproved) return this.recorder.refused(toolName, args, unapproved, started);
    const hooks = this.hookChain();
    const call = hooks.length ? this.recorder.callInfo(toolName, args) : undefined;
    const previousProgress = this.currentProgress;
    this.currentProgress = options.onProgress;
    let result: ToolRunResult;
    try {
      result = await runToolCall({
        agent: this,
        access: this.access,
        services: this.services,
        toolName,
        tool,
        args,
        options,
        agentSignal: this.abortController?.signal,
        running: (this.running ??= new Set()),
        host: need ? this.approvedHost() : this.host(),
        before:
          call && hooks.some((h) => h.has('beforeToolCall'))
            ? () => runBeforeHooks(hooks, call, (m) => this.warn(m))
            : undefined,
      });
    } finally {
      this.currentProgress = previousProgress;
    }
    if (this.promptCanaries && result.envelope.success)
      result = this.scanForCanaries(toolName, args, result);
    const durationMs = Date.now() - started;
    this.recorder.finished(toolName, args, result, durationMs);
    if (call && result.stage === 'ran') {
      const outcome = { envelope: result.envelope, durationMs };
      runAfterHooks(hooks, call, outcome, result.error, (m) => this.warn(m));
    }
    return result.envelope;
  }

  protected host(): ToolRunHost {
    return (this.runHost ??= {
      confirm: (request, channel, signal) => this.confirm(request, channel, signal),
      audit: (name, input, confirmed) => this.emitMutation(name, input, confirmed),
      warn: (message) => this.warn(message),
    });
  }

  /** For a call a person has just approved: its destructive confirmation is that approval. */
  protected approvedHost(): ToolRunHost {
    return { ...this.host(), confirm: () => Promise.resolve({ confirmed: true }) };
  }

  /**
   * Waits for a person's approval of a call its tier holds (see the `confirm` option), under the
   * agent's and the caller's cancellation and the approval's own time limit; emits the approval
   * event with the measured wait. Returns the refusal, or undefined when approved.
   */
  protected async approve(
    toolName: string,
    need: ApprovalNeed,
    options: ExecuteOptions,
  ): Promise<ParseAgentError | undefined> {
    const waitStarted = Date.now();
    const signals = [this.abortController?.signal, options.signal].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    let refusal: ParseAgentError | undefined;
    try {
      await awaitApproval(
        toolName,
        need,
        options.elicitation,
        signals.length ? AbortSignal.any(signals) : undefined,
        this.approvals.timeoutMs,
      );
    } catch (error) {
      refusal =
        error instanceof ParseAgentError
          ? error
          : new ApprovalRefusedError('cancelled', `${toolName}: the approval failed; not run.`);
    }
    this.recorder.approval({
      tool: toolName,
      tier: need.tier,
      outcome:
        refusal instanceof ApprovalRefusedError
          ? refusal.outcome
          : refusal
            ? 'cancelled'
            : 'approved',
      ...(refusal ? { reason: refusal.message } : {}),
      wait_ms: Date.now() - waitStarted,
      ...(need.className ? { class_name: need.className } : {}),
      ...(need.method ? { method: need.method } : {}),
    });
    return refusal;
  }

  /**
   * Looks for the operator's canaries in a successful result: a match is a `prompt_injection`
   * security event (which canaries, never the text); with action 'refuse' the result is replaced
   * by a refusal, so the model never reads it.
   */
  protected scanForCanaries(
    toolName: string,
    args: Record<string, unknown>,
    result: ToolRunResult,
  ): ToolRunResult {
    const canaries = this.promptCanaries!;
    const hits = canaryHits(canaries, result.envelope.success ? result.envelope.data : undefined);
    if (!hits.length) return result;
    const refuse = canaries.action === 'refuse';
    this.recorder.promptInjection(toolName, args, hits, refuse);
    if (!refuse) return result;
    const error = new AccessDeniedError(
      `The result of ${toolName} contains text the operator marked as a prompt-injection canary; it was withheld. Narrow the query to leave that data out, or ask the operator.`,
      { kind: 'prompt_injection' },
    );
    return { ...result, envelope: failureFromError(error, toolName), error };
  }

  /** The refusal of a call by the gates after the rate limit: tool, environment, arguments. */
  protected callRefusal(
    toolName: string,
    tool: ToolDefinition | undefined,
    args: unknown,
  ): ParseAgentError | undefined {
    const refusal = this.refusal(toolName, tool);
    if (refusal) return refusal;
    const gate = envGateRefusal(tool!, this.allowMutations);
    if (gate) return new AccessDeniedError(gate);
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      return new AgentValidationError('arguments must be a JSON object.');
    }
    const invalid = this.services.tools.validate(toolName, args as Record<string, unknown>);
    return invalid ? new AgentValidationError(invalid) : undefined;
  }

  /** Asks the person to confirm a destructive call (see confirmDestructiveCall). */
  protected confirm(
    request: ConfirmationRequest,
    channel: ElicitationChannel | undefined,
    signal: AbortSignal,
  ): Promise<{ confirmed: boolean }> {
    return confirmDestructiveCall(request, channel, signal, this.confirmationRequired);
  }

  /** The audit event of a completed change (field names only), always emitted. */
  protected emitMutation(
    toolName: string,
    input: MutationAuditInput,
    confirmed: boolean | undefined,
  ): void {
    this.recorder.mutation(toolName, input, confirmed);
  }

  /**
   * Adds hooks to this agent (see AgentHooks); the returned function removes them. A sub-agent's
   * calls run its own hooks, then its ancestors'.
   */
  addHooks(hooks: AgentHooks): () => void {
    return (this.ownHooks ??= new AgentHookSet()).addAll(hooks);
  }

  /** The last operations of this agent (at most `maxLogSize`), oldest first. Never argument values. */
  get operationLog(): OperationLogEntry[] {
    return this.recorder.operations();
  }

  /**
   * Transport port: a streamed call of this agent lost its client before the answer (emits
   * `AgentEvents.abandonedStreams$`).
   *
   * @internal
   */
  streamAbandoned(info: Omit<AbandonedStreamEvent, 'agent_id' | 'correlation_id' | 'at'>): void {
    this.services.events.emitAbandonedStream({
      ...info,
      agent_id: this.agentId,
      ...(this.correlationId ? { correlation_id: this.correlationId } : {}),
      at: new Date().toISOString(),
    });
  }

  /** Conversation port: a model response (runs the onLlmResponse hooks, own then ancestors'). */
  llmResponded(response: LlmResponseInfo): void {
    for (const set of this.hookChain()) set.llmResponse(response, (m) => this.warn(m));
  }

  /** Conversation port: a model request failed (runs the onError hooks with source `llm`). */
  llmFailed(error: Error): void {
    const context = {
      source: 'llm' as const,
      agentId: this.agentId,
      correlationId: this.correlationId,
    };
    for (const set of this.hookChain()) set.error(error, context, (m) => this.warn(m));
  }

  /** This agent's hook set and its ancestors', nearest first. */
  protected hookChain(): AgentHookSet[] {
    const chain = this.ownHooks ? [this.ownHooks] : [];
    return this.parentAgent ? [...chain, ...this.parentAgent.hookChain()] : chain;
  }
}
