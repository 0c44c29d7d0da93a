import type { DataRow } from '../../ports/data-path';
import type { PolicedReader } from './policed-reader';

/** What a reader stamps on rows when the agent asked for provenance (`sourceProvenance: true`). */
export interface SourceStamp {
  /** The tool the rows are returned by. */
  tool: string;
}

/** The `_source` a returned row carries: enough for an answer to cite where it came from. */
export interface RowSource {
  class: string;
  tool: string;
  /** The row's objectId; null for a row that is no stored object (an aggregate's output). */
  objectId: string | null;
}

/**
 * Adds `_source` to each row, in place. Runs on rows redaction has already copied and cut, so it
 * only adds what the caller was told it would get: the class (as the caller named it), the tool
 * and the objectId the row itself shows (never one it does not show; `rowsAreObjects` false, for
 * a pipeline's output whose objectId is not the class's own column, gives null). A row's own `_source` field,
 * if a class has one, is replaced: the stamp must not be forgeable by data.
 */
export function stampSource(
  rows: readonly DataRow[],
  className: string,
  stamp: SourceStamp | undefined,
  rowsAreObjects = true,
): void {
  if (!stamp) return;
  for (const row of rows) {
    const id = rowsAreObjects ? row.objectId : undefined;
    const source: RowSource = {
      class: className,
      tool: stamp.tool,
      objectId: typeof id === 'string' ? id : null,
    };
    row._source = source;
  }
}

/**
 * A reader whose returned rows carry `_source` (see stampSource): the reader's own results, after
 * its projection and redaction, stamped on the way out. Everything else passes through.
 */
export function stampingReader(reader: PolicedReader, stamp: SourceStamp): PolicedReader {
  const stamped: Partial<PolicedReader> = {
    find: async (className, request, display) => {
      const page = await reader.find(className, request, display);
      stampSource(page.rows, className, stamp);
      return page;
    },
    get: async (className, objectId, request) => {
      const found = await reader.get(className, objectId, request);
      if (found.row) stampSource([found.row], className, stamp);
      return found;
    },
    getMany: async (className, objectIds, request) => {
      const found = await reader.getMany(className, objectIds, request);
      stampSource(found.rows, className, stamp);
      return found;
    },
    // semantic_search: its documents are these rows, so each one cites its class and id.
    vectorSearch: async (className, request, embedCandidates) => {
      const found = await reader.vectorSearch(className, request, embedCandidates);
      stampSource(found.rows, className, stamp);
      return found;
    },
    search: async (className, request) => {
      const found = await reader.search(className, request);
      stampSource(
        found.rows.map((hit) => hit.row),
        className,
        stamp,
      );
      return found;
    },
    prepare: async (operation, className, pipeline, options) => {
      const prepared = await reader.prepare(operation, className, pipeline, options);
      // An output objectId counts only when it is the class's own column, copied unchanged.
      const ids = prepared.columnOrigin('objectId') === 'objectId';
      return {
        ...prepared,
        columnOrigin: (field) => prepared.columnOrigin(field),
        run: async (run) => {
          const rows = await prepared.run(run);
          stampSource(rows, className, stamp, ids);
          return rows;
        },
      };
    },
  };
  return new Proxy(reader, {
    get(target, property) {
      if (typeof property === 'string' && Object.prototype.hasOwnProperty.call(stamped, property))
        return stamped[property as keyof PolicedReader];
      // The reader itself as `this`: its getters and methods read its private fields.
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
