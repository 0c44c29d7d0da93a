import type { DataPath, DataRow } from '../ports/data-path';
import type { ReadPolicy } from '../security/read-policy';
import type { ProgressUpdate, ToolAgent } from './tool-context';

/**
 * What an @AgentMethod receives as its second argument (the first is its validated arguments).
 * Instance methods also run with `this` set to a model instance holding the object's fields.
 */
export interface AgentMethodContext<TObject extends DataRow = DataRow> {
  /** The calling agent (identity, tier, tenant). */
  agent: ToolAgent;
  className: string;
  /**
   * The agent's data path, bound to its identity: a session agent reads and writes with its own
   * token (Parse enforces its ACL/CLP), only a master-key agent uses the master key. Write and
   * admin methods get a path that can write; readonly methods the read path.
   */
  data: DataPath;
  /** The agent's read policy (class gate, allowlists, tenant scope) for any further reads. */
  access: ReadPolicy;
  /** The object named by `object_id`, fetched through the read policy (tenant, filters, allowlist). */
  object?: TObject;
  objectId?: string;
  /** True when the caller asked for a preview: describe what would happen, change nothing. */
  dryRun: boolean;
  /** Aborted on cancellation or timeout: pass it to every I/O call. */
  signal: AbortSignal;
  reportProgress(update: ProgressUpdate): void;
}
