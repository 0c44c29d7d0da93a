import { Subject, type Observable } from 'rxjs';
import { isolateSubscribers, reportToStderr } from './isolated-observable';

/** One finished tool call. Argument values and filter values never appear here. */
export interface ToolCallEvent {
  tool: string;
  args_keys: string[];
  auth_type: 'session_token' | 'master_key' | 'acl_user' | 'acl_role';
  using_master_key: boolean;
  permissions: string;
  agent_id: string;
  agent_depth: number;
  success: boolean;
  duration_ms: number;
  correlation_id?: string;
  parent_agent_id?: string;
  classes_only?: string[];
  classes_except?: string[];
  tools_only?: string[];
  tools_except?: string[];
  methods_only?: string[];
  methods_except?: string[];
  filters?: Record<string, string[]>;
  tenant_scoped?: boolean;
  /** The `_User` an impersonating agent acts as (see ParseAgent.impersonate). */
  impersonated_user?: string;
  /** The operator's label of that impersonation. */
  impersonation_label?: string;
  result_size?: number;
  est_input_tokens?: number;
  /**
   * est_input_tokens priced at the agent's `inputTokenCostPerMillion` (USD); only on success and
   * only when a price is set, so dashboards never read a constant zero.
   */
  est_cost_usd?: number;
  /** Embedding requests the call made (semantic_search's query), when it made any. */
  embedding_calls?: number;
  /** Input tokens those requests used, as the provider reported them (0 for the local embedder). */
  embedding_tokens?: number;
  /** Their cost in USD, when the embeddings have a price (`costPerMillionTokens`). */
  embedding_cost_usd?: number;
  /** Failure only: the class of the error that ended the call (`AccessDeniedError`, `TypeError`). */
  error_class?: string;
  error_code?: string;
  denial_kind?: string;
}

/**
 * One change an agent made to the data (or schema). Field names only: values never appear here,
 * so the audit log cannot leak what was written.
 */
export interface MutationEvent {
  action: 'create' | 'update' | 'delete' | 'create_class' | 'delete_class' | 'call_method';
  tool: string;
  agent_id: string;
  auth_type: ToolCallEvent['auth_type'];
  using_master_key: boolean;
  permissions: string;
  tenant_id?: string;
  class_name: string;
  object_id?: string;
  /** `Class.method` for call_method. */
  method?: string;
  /**
   * Names of the fields written, never values. For call_method: every field the method wrote
   * through its context's data path (not its arguments); the writes themselves are in `writes`.
   */
  changed_keys: string[];
  /** call_method: each write the method made, in order (class, object, field names). */
  writes?: Array<{
    action: 'create' | 'update' | 'delete' | 'create_class' | 'delete_class';
    class_name: string;
    object_id?: string;
    changed_keys: string[];
  }>;
  /** call_method: the method threw after the writes listed (they happened all the same). */
  failed?: true;
  /** Whether a human confirmed it through the MCP client (elicitation). */
  confirmed?: boolean;
  correlation_id?: string;
  at: string;
}

/**
 * A call refused for security reasons. `denied`: a gate refused it (tier, tools filter, client-mode
 * ceiling, environment gate, hidden class, class filter, tenant scope, field allowlist, a
 * confirmation not given, a beforeToolCall hook). `blocked`: the query itself was refused as
 * unsafe (security_blocked). Argument values never appear here.
 */
export interface SecurityEvent {
  /** `prompt_injection`: a tool result held an operator's canary (see promptCanaries). */
  type: 'denied' | 'blocked' | 'prompt_injection';
  /** prompt_injection only: which canaries matched (`strings[0]`, `patterns[1]`), never the text. */
  canaries?: string[];
  /** prompt_injection only: whether the result was withheld (action 'refuse'). */
  refused?: boolean;
  tool: string;
  error_code: string;
  error_class: string;
  /** AccessDeniedError's kind (hidden_class, class_filter, hook_refused, ...), when it has one. */
  denial_kind?: string;
  /** The refusal as the caller read it. */
  message: string;
  args_keys: string[];
  agent_id: string;
  agent_depth: number;
  parent_agent_id?: string;
  auth_type: ToolCallEvent['auth_type'];
  using_master_key: boolean;
  permissions: string;
  tenant_id?: string;
  correlation_id?: string;
  at: string;
}

/** One approval round trip (see the agent option `confirm`); never argument values. */
export interface ApprovalEvent {
  tool: string;
  /** The tier that needed approval (for call_method, the method's own tier). */
  tier: 'readonly' | 'write' | 'admin';
  outcome: 'approved' | 'declined' | 'timeout' | 'unavailable' | 'cancelled';
  /** Why it was not approved, in words; absent when approved. */
  reason?: string;
  /** How long the call waited for the answer, in milliseconds. */
  wait_ms: number;
  class_name?: string;
  method?: string;
  agent_id: string;
  correlation_id?: string;
  impersonated_user?: string;
  at: string;
}

/**
 * One operation on a data path (Parse REST, PostgreSQL, MongoDB...) during a tool call: where,
 * what, on which class, as which kind of identity, how many rows and how long. Never a where,
 * pipeline values, written values or rows.
 */
export interface DataOperationEvent {
  /** The data path's kind (`parse-rest`, `postgres`, `mongo`, or an application's own). */
  path: string;
  /** find, get, count, aggregate, group_by, group_by_date, distinct, explain, search, create... */
  operation: string;
  class_name: string;
  identity: ToolCallEvent['auth_type'];
  /** aggregate: the stage names in order ($match, $group...), at most 32. */
  stage_types?: string[];
  /** aggregate with more than 32 stages: how many there were. */
  stage_count?: number;
  /** Rows returned (find, get, aggregate, group_by, distinct values, search hits). */
  rows?: number;
  duration_ms: number;
  success: boolean;
  error_class?: string;
  tool: string;
  agent_id: string;
  correlation_id?: string;
  at: string;
}

/** An SSE response the client went away from before its answer was written. */
export interface AbandonedStreamEvent {
  method: string;
  tool?: string;
  /** How long the stream had been open, in milliseconds. */
  open_ms: number;
  agent_id: string;
  correlation_id?: string;
  /** Streams abandoned since the endpoint started, this one included. */
  total: number;
  at: string;
}

/**
 * The stream of tool-call events, for audit logs and metrics. A subscriber that throws is reported
 * (`options.warn`, else stderr) and keeps receiving events: it never fails a call or the process.
 */
export class AgentEvents {
  protected readonly subject = new Subject<ToolCallEvent>();
  readonly toolCalls$: Observable<ToolCallEvent>;
  protected readonly mutationSubject = new Subject<MutationEvent>();
  /** Every change agents make, emitted after it succeeded (always, observed or not). */
  readonly mutations$: Observable<MutationEvent>;
  protected readonly securitySubject = new Subject<SecurityEvent>();
  /** Every denied or blocked call, as it happens (each is also written as a log line). */
  readonly securityEvents$: Observable<SecurityEvent>;
  protected readonly dataSubject = new Subject<DataOperationEvent>();
  /** Every data-path operation of a tool call (see DataOperationEvent); made only when observed. */
  readonly dataOperations$: Observable<DataOperationEvent>;
  protected readonly abandonedSubject = new Subject<AbandonedStreamEvent>();
  /** Every streamed MCP call whose client disconnected before the answer. */
  readonly abandonedStreams$: Observable<AbandonedStreamEvent>;
  protected readonly approvalSubject = new Subject<ApprovalEvent>();
  /** Every approval round trip (approved or not), with the measured wait. */
  readonly approvals$: Observable<ApprovalEvent>;

  constructor(options: { warn?: (message: string) => void } = {}) {
    const report = options.warn ?? reportToStderr;
    this.toolCalls$ = isolateSubscribers(this.subject, 'AgentEvents.toolCalls$', report);
    this.mutations$ = isolateSubscribers(this.mutationSubject, 'AgentEvents.mutations$', report);
    this.securityEvents$ = isolateSubscribers(
      this.securitySubject,
      'AgentEvents.securityEvents$',
      report,
    );
    this.approvals$ = isolateSubscribers(this.approvalSubject, 'AgentEvents.approvals$', report);
    this.dataOperations$ = isolateSubscribers(
      this.dataSubject,
      'AgentEvents.dataOperations$',
      report,
    );
    this.abandonedStreams$ = isolateSubscribers(
      this.abandonedSubject,
      'AgentEvents.abandonedStreams$',
      report,
    );
  }

  emitDataOperation(event: DataOperationEvent): void {
    this.dataSubject.next(event);
  }

  /** Whether anyone listens to data operations (paths are instrumented only then). */
  get dataObserved(): boolean {
    return this.dataSubject.observed;
  }

  emitAbandonedStream(event: AbandonedStreamEvent): void {
    this.abandonedSubject.next(event);
  }

  emitApproval(event: ApprovalEvent): void {
    this.approvalSubject.next(event);
  }

  emitSecurity(event: SecurityEvent): void {
    this.securitySubject.next(event);
  }

  emitMutation(event: MutationEvent): void {
    this.mutationSubject.next(event);
  }

  emit(event: ToolCallEvent): void {
    this.subject.next(event);
  }

  /** Whether anyone listens: events cost work (result sizes) only when they are consumed. */
  get observed(): boolean {
    return this.subject.observed;
  }

  complete(): void {
    this.subject.complete();
    this.mutationSubject.complete();
    this.securitySubject.complete();
    this.approvalSubject.complete();
    this.dataSubject.complete();
    this.abandonedSubject.complete();
  }
}
