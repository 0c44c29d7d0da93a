import type { DataRow } from '../../ports/data-path';

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
