import type { DataPath, DataRow } from '../ports/data-path';
import type { ReadPolicy } from '../security/read-policy';
import type { PolicedReader } from './read/policed-reader';
import type { ProgressUpdate, ToolAgent } from './tool-context';
import type { PolicedWriter } from './write/policed-writer';

/**
 * What an @AgentMethod receives as its second argument (the first is its validated arguments).
 * Instance methods also run with `this` set to a model instance holding the object's fields.
 */
export interface AgentMethodContext<TObject extends DataRow = DataRow> {
  /** The calling agent (identity, tier, tenant). */
  agent: ToolAgent;
  className: string;
  /**
   * The agent's data, policed, in the `DataPath` shape: `find`, `get` and `count` read as the
   * agent reads (class gate, allowlist, tenant scope, filters, canonical filter, redaction);
   * `create`, `update`, `delete`, `createClass` and `deleteClass` write at the agent's identity
   * (a session agent with its own token, so Parse enforces its ACL/CLP) through the policed
   * writer: classes the agent can see, rows its reads find, the tenant field forced on create and
   * never changed, pointers only to rows it can read. Each write is recorded for the audit; in a
   * preview or a readonly method every write is refused. `principals` says who the agent is.
   */
  data: DataPath;
  /** The agent's PolicedReader, for reads `data` has no form for (pipelines, search, getMany). */
  read: PolicedReader;
  /**
   * The agent's PolicedWriter, with the field rules of the raw write tools (the `@AgentFields`
   * allowlist, no internal columns, the model's validation rules) on top of `data`'s; its writes
   * are recorded and refused like `data`'s.
   */
  write: PolicedWriter;
  /** The agent's read policy (class gate, allowlists, tenant scope) for schema questions. */
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
