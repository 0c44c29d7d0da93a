import type { AgentIdentity } from '../core/agent-identity';
import type { MutationEvent } from '../core/agent-events';
import type { PermissionLevel } from '../core/constants';
import type { DataOperation, DataPath } from '../ports/data-path';
import type { RetrievalCall } from '../retrieval/retrieval-call';
import type { ReadPolicy } from '../security/read-policy';

export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** A tool as another tool lists it (list_tools). */
export interface ToolSummary {
  name: string;
  description: string;
  category: string;
  inputSchema: Record<string, unknown>;
}

/** What a tool sees of the calling agent (ParseAgent implements it). */
export interface ToolAgent extends AgentIdentity {
  readonly correlationId?: string;
  readonly tenantId?: string;
  /** Aborted when the agent is cancelled. */
  readonly signal: AbortSignal;
  allowedTools(): string[];
  toolDefinitions(options?: { category?: string }): ToolSummary[];
  reportProgress(update: ProgressUpdate): void;
  /** Raw create/update/delete allowed for this agent (with the env gates; see allowMutations). */
  readonly allowMutations?: boolean;
  /** @deprecated See AgentOptions.agentDebug: it changes nothing now. */
  readonly agentDebug?: boolean;
  /** Whether the per-agent `methods:` filter lets `Class.method` through. */
  methodPermitted?(className: string, methodName: string): boolean;
  /** Read tools stamp `_source` ({ class, tool, objectId }) on every row they return. */
  readonly sourceProvenance?: boolean;
  /** Whether this agent's tier reaches `required`. */
  tierReaches?(required: PermissionLevel): boolean;
}

/** What a destructive call asks the human before it runs. */
export interface ConfirmationRequest {
  /** What will happen, in words a person can judge ("Delete Order abc123"). */
  message: string;
  tool: string;
  className: string;
  objectId?: string;
}

/** The fields of a mutation audit event a tool supplies (the agent adds who and when). */
export type MutationAuditInput = Pick<
  MutationEvent,
  'action' | 'class_name' | 'object_id' | 'method' | 'changed_keys' | 'writes' | 'failed'
>;

/** Operator switches for explain and the COLLSCAN guard (both off by default). */
export interface AnalyticsSettings {
  /** Refuse queries whose plan scans a whole collection (classes with @AgentAllowCollscan excepted). */
  refuseCollscan: boolean;
  /** Include the winning plan in explain results (it reveals which indexes exist). */
  exposeExplain: boolean;
}

export const DEFAULT_ANALYTICS_SETTINGS: Readonly<AnalyticsSettings> = Object.freeze({
  refuseCollscan: false,
  exposeExplain: false,
});

/** What a tool handler receives besides its arguments. */
export interface ToolContext {
  /** The calling agent: identity, permissions, tenant, allowed tools. */
  agent: ToolAgent;
  /** The agent's read policy: class gate, allowlists, tenant scope, filters, redaction. */
  access: ReadPolicy;
  /** The data path for row reads (find/get/count), already bound to the agent's identity. */
  data: DataPath;
  /**
   * The data path the router chooses for another operation (aggregate, group_by, distinct,
   * explain...), bound to the agent's identity. Throws DataPathUnavailableError (fail closed, with
   * what to configure) when no configured path can serve it for this identity.
   */
  dataFor(operation: DataOperation): DataPath;
  /** The tool's time limit in milliseconds (pushed down to databases that take one). */
  timeoutMs: number;
  /** Operator switches for the analytics tools. */
  analytics: AnalyticsSettings;
  /** Aborted on cancellation or timeout; pass it to every I/O call. */
  signal: AbortSignal;
  /** Reports progress to streaming clients (no-op when nobody listens). */
  reportProgress(update: ProgressUpdate): void;
  /**
   * The data path for writes, bound to the agent's identity (a session writes with its token, so
   * Parse enforces its ACL/CLP). Resolved on first use; throws when no path can write for it.
   */
  readonly writeData: DataPath;
  /**
   * Asks the human to confirm a destructive call through the MCP client (elicitation). Resolves
   * `{ confirmed: true }` when they accept, `{ confirmed: false }` when confirmation is switched off
   * and the client cannot ask; rejects (access_denied) when they decline, or when the client cannot
   * ask and confirmation is required.
   */
  confirm(request: ConfirmationRequest): Promise<{ confirmed: boolean }>;
  /** Records a completed change on AgentEvents.mutations$ (field names, never values). */
  audit(event: MutationAuditInput): void;
  /** Embeddings for semantic_search, with the call's spend (absent: retrieval not set up). */
  retrieval?: RetrievalCall;
}
