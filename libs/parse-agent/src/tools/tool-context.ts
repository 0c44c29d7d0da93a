import type { AgentIdentity } from '../core/agent-identity';
import type { MutationEvent } from '../core/agent-events';
import type { PermissionLevel } from '../core/constants';
import type { DataPath } from '../ports/data-path';
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
  /** Disclose agent methods' permitted_keys in get_schema (trusted environments only). */
  readonly agentDebug?: boolean;
  /** Whether the per-agent `methods:` filter lets `Class.method` through. */
  methodPermitted?(className: string, methodName: string): boolean;
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
  'action' | 'class_name' | 'object_id' | 'method' | 'changed_keys'
>;

/** What a tool handler receives besides its arguments. */
export interface ToolContext {
  /** The calling agent: identity, permissions, tenant, allowed tools. */
  agent: ToolAgent;
  /** The agent's read policy: class gate, allowlists, tenant scope, filters, redaction. */
  access: ReadPolicy;
  /** The data path chosen for this tool, already bound to the agent's identity. */
  data: DataPath;
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
}
