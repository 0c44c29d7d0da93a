import type { AgentIdentity } from '../core/agent-identity';

export type DataRow = Record<string, unknown>;

/** A read as the policy planned it: API field names, constraints already composed and normalized. */
export interface DataFindQuery {
  where?: Record<string, unknown>;
  keys?: string[];
  include?: string[];
  order?: string;
  limit?: number;
  skip?: number;
}

/** What a data path does for one tool call. */
export type DataOperation =
  'find' | 'get' | 'count' | 'aggregate' | 'distinct' | 'explain' | 'write';

/**
 * Reads (and, later, writes) for ONE identity: a session token, an ACL scope or the master key is
 * bound when the path is created, so no tool ever handles credentials. Every call takes the tool's
 * AbortSignal and stops its I/O when it aborts.
 */
export interface DataPath {
  /** Which implementation answers: 'parse-rest', 'mongo', 'postgres', or an application's own. */
  readonly kind: string;
  find(className: string, query: DataFindQuery, signal?: AbortSignal): Promise<DataRow[]>;
  /** Undefined when the object does not exist or this identity may not read it. */
  get(
    className: string,
    objectId: string,
    query: Pick<DataFindQuery, 'keys' | 'include'>,
    signal?: AbortSignal,
  ): Promise<DataRow | undefined>;
  count(className: string, where: Record<string, unknown>, signal?: AbortSignal): Promise<number>;
}

/**
 * One way to reach the data (Parse REST, a direct database driver). The data router asks each
 * provider, in order, whether it serves an operation for an identity, and fails closed when none
 * does: a scoped identity is never served by a path that cannot enforce its scope.
 */
export interface DataPathProvider {
  readonly kind: string;
  /** Undefined when this provider serves the operation for the identity; else why not. */
  refusal(operation: DataOperation, identity: AgentIdentity): string | undefined;
  bind(identity: AgentIdentity): DataPath;
}

/** Injection token for the data path providers (an array), tried in order by the data router. */
export const DataPathProvider = Symbol('DataPathProvider');
