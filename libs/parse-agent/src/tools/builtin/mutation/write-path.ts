import { ParseAgentConfigError } from '../../../core/errors';
import type { DataPath } from '../../../ports/data-path';

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
