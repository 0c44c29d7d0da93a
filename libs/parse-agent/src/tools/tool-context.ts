import type { AgentAccess } from '../core/agent-access';
import type { ParseAgent } from '../core/parse-agent';
import type { ParseRestClient } from '../data/parse-rest-client';

export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** What a tool handler receives besides its arguments. */
export interface ToolContext {
  /** The calling agent: identity, permissions, tenant, allowed tools. */
  agent: ParseAgent;
  /** The agent's enforcement layer: class gate, allowlists, tenant scope, redaction. */
  access: AgentAccess;
  /** Parse REST, already bound to nothing: pass `access.auth` to run as the agent. */
  parse: ParseRestClient;
  /** Aborted on cancellation or timeout; pass it to every I/O call. */
  signal: AbortSignal;
  /** Reports progress to streaming clients (no-op when nobody listens). */
  reportProgress(update: ProgressUpdate): void;
}
