import { ParseAgentConfigError } from '../../core/errors';
import type { DataPath } from '../../ports/data-path';

type WriteMethod = 'create' | 'update' | 'delete' | 'createClass' | 'deleteClass';

/** The path's write operation, or a refusal naming the path that cannot run it (fail closed). */
export function writeOperation<K extends WriteMethod>(
  path: DataPath,
  method: K,
): NonNullable<DataPath[K]> {
  const operation = path[method];
  if (typeof operation !== 'function') {
    throw new ParseAgentConfigError(
      `The '${path.kind}' data path cannot ${method} for this agent; writes need the Parse REST path.`,
    );
  }
  return operation as NonNullable<DataPath[K]>;
}

/** A write path that can run its permission checks ahead of the write (the ACL-scoped one). */
interface CheckedWritePath {
  checkWrite(
    operation: 'create' | 'update' | 'delete',
    className: string,
    objectId?: string,
    signal?: AbortSignal,
  ): Promise<void>;
}

/**
 * Runs the path's own write checks now, when it has them (an aclUser/aclRole agent's path checks
 * CLP and the row's ACL itself): a destructive tool calls it before asking a person to confirm,
 * so nobody confirms a change that would be refused. Paths without checks (Parse REST enforces
 * them at write time) pass.
 */
export async function precheckWrite(
  path: DataPath,
  operation: 'create' | 'update' | 'delete',
  className: string,
  objectId?: string,
  signal?: AbortSignal,
): Promise<void> {
  const check = (path as Partial<CheckedWritePath>).checkWrite;
  if (typeof check === 'function') await check.call(path, operation, className, objectId, signal);
}
