import { DEFAULT_LIMIT } from '../../core/constants';
import type { DataPath } from '../../ports/data-path';
import type { MutationAuditInput } from '../tool-context';
import type { PolicedReader } from '../read/policed-reader';

/** One write an agent method made through its context (`ctx.data` or `ctx.write`). */
export interface MethodWrite {
  action: 'create' | 'update' | 'delete' | 'create_class' | 'delete_class';
  class_name: string;
  object_id?: string;
  /** Names of the fields written (never values); empty for deletes. */
  changed_keys: string[];
}

/** The writes an agent method's `ctx.data` sends to the policed writer. */
export type MethodWrites = Required<
  Pick<DataPath, 'create' | 'update' | 'delete' | 'createClass' | 'deleteClass'>
>;

/**
 * What an agent method gets as `ctx.data`: the `DataPath` shape it was written against, policed.
 * `find`, `get` and `count` read through the agent's PolicedReader (class gate, allowlist, tenant
 * scope, filters, canonical filter, redaction); the writes go through the policed writer, which
 * checks, records and (in a preview or a readonly method) refuses them; `principals` answers who
 * the agent is. Nothing else of a raw path is there.
 */
export function methodDataPath(read: PolicedReader, writes: MethodWrites): DataPath {
  return {
    kind: 'policed',
    async find(className, query) {
      const { where, keys, include, order, limit, skip } = query;
      const page = await read.find(className, {
        where,
        keys,
        include,
        order,
        limit: limit ?? DEFAULT_LIMIT,
        skip,
      });
      return page.rows;
    },
    async get(className, objectId, query) {
      // Through the planned find: a row of another tenant or filtered out is "not there".
      const page = await read.find(className, {
        where: { objectId },
        keys: query.keys,
        include: query.include,
        limit: 1,
      });
      return page.rows[0];
    },
    count: (className, where) => read.count(className, { where }),
    principals: () => read.principals(),
    refreshPrincipals: () => read.refreshPrincipals(),
    ...writes,
  };
}

/** A mutation event of the writer as one of a method's writes. */
export function methodWrite(event: MutationAuditInput): MethodWrite | undefined {
  const { action } = event;
  if (action === 'call_method') return undefined;
  return {
    action,
    class_name: event.class_name,
    ...(event.object_id !== undefined ? { object_id: event.object_id } : {}),
    changed_keys: event.changed_keys ?? [],
  };
}

/** The names of the fields a method's writes changed, sorted and without repeats. */
export function writtenKeys(writes: readonly MethodWrite[]): string[] {
  return [...new Set(writes.flatMap((w) => w.changed_keys))].sort();
}
