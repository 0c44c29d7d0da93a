import type { AgentIdentity } from '../core/agent-identity';
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
}

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
}
