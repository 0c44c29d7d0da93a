import type { AgentIdentity } from '../core/agent-identity';
import type { DataOperation, DataPath } from '../ports/data-path';
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
}
