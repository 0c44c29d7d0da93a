/**
 * Pointer compaction for analytics output. A pointer comes back from the data paths as a Parse
 * Pointer object, a storage string `"<Class>$<objectId>"` (Parse-on-MongoDB's `_p_<field>`) or a
 * bare objectId; the repeated class costs bytes and confuses models, so results carry the bare
 * objectId and the class once, in `pointer_classes` / `pointer_class`. Which values are pointers is
 * known from the schema and the pipeline, never guessed from a string's look.
 */

export interface PointerRef {
  className: string;
  objectId: string;
}

const STORAGE_POINTER = /^([A-Za-z_][A-Za-z0-9_]*)\$(.+)$/;

/** `"Class$id"` or `{ __type: 'Pointer', className, objectId }`; undefined for anything else. */
export function parsePointer(value: unknown): PointerRef | undefined {
  if (typeof value === 'string') {
    const m = STORAGE_POINTER.exec(value);
    return m ? { className: m[1], objectId: m[2] } : undefined;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    if (
      v.__type === 'Pointer' &&
      typeof v.className === 'string' &&
      typeof v.objectId === 'string'
    ) {
      return { className: v.className, objectId: v.objectId };
    }
  }
  return undefined;
}

/**
 * Compacts grouping keys of a field known to be a pointer to `pointerClass`. Every non-null key must
 * be a pointer to that one class; otherwise nothing is compacted (an anomalous column stays raw).
 * A key that is already a bare objectId (PostgreSQL stores only the id) counts as compacted.
 */
export function compactPointerKeys(
  keys: readonly unknown[],
  pointerClass: string | undefined,
): { keys: unknown[]; pointerClass?: string } {
  if (!pointerClass) return { keys: [...keys] };
  const out: unknown[] = [];
  for (const key of keys) {
    if (key === null || key === undefined) {
      out.push(null);
      continue;
    }
    const ref = parsePointer(key);
    if (ref) {
      if (ref.className !== pointerClass) return { keys: [...keys] };
      out.push(ref.objectId);
    } else if (typeof key === 'string') {
      out.push(key);
    } else {
      return { keys: [...keys] };
    }
  }
  return { keys: out, pointerClass };
}

/** The class a column's lineage points to, when the pipeline shows it copies a pointer column. */
export type ColumnPointerClass = (column: string) => string | undefined;

/**
 * Compacts the pointer columns of aggregate rows. A top-level column is a pointer column when
 * every value (nulls aside) is a pointer to one and the same class, in any of the shapes the data
 * paths return: a Parse Pointer object (Parse REST, the direct PostgreSQL path), a storage string
 * in a `_p_<field>` column (Parse-on-MongoDB storage), or a bare objectId in a column whose
 * lineage (`classOf`) is a pointer column of the pipeline's class (the direct MongoDB path). Such
 * a column holds bare objectIds (`_p_<field>` renamed `<field>`) and its class is reported once.
 * Any other column is left exactly as it is: a string is never read as a pointer by its look.
 */
export function compactPointers(
  rows: readonly Record<string, unknown>[],
  classOf: ColumnPointerClass = () => undefined,
): {
  rows: Record<string, unknown>[];
  pointerClasses: Record<string, string>;
} {
  const columns = new Map<string, string | null>(); // column -> class, '' = nulls only, null = raw
  for (const row of rows) {
    for (const [key, value] of Object.entries(row)) {
      const known = columns.get(key);
      if (known === null) continue;
      const storage = key.startsWith('_p_') && key.length > 3;
      if (storage && key.slice(3) in row) {
        columns.set(key, null);
        continue;
      }
      if (value === null || value === undefined) {
        if (known === undefined) columns.set(key, '');
        continue;
      }
      const cls = pointerClassOf(key, value, storage, classOf);
      if (!cls || (known && cls !== known)) columns.set(key, null);
      else columns.set(key, cls);
    }
  }
  const pointerClasses: Record<string, string> = {};
  for (const [key, cls] of columns) if (cls) pointerClasses[outputName(key)] = cls;
  const out = rows.map((row) => {
    const next: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) {
      if (!columns.get(key)) {
        next[key] = value;
        continue;
      }
      next[outputName(key)] =
        value === null || value === undefined ? value : (parsePointer(value)?.objectId ?? value);
    }
    return next;
  });
  return { rows: out, pointerClasses };
}

const outputName = (key: string) => (key.startsWith('_p_') && key.length > 3 ? key.slice(3) : key);

/** The class a column's value points to, in the shapes described above; undefined otherwise. */
function pointerClassOf(
  key: string,
  value: unknown,
  storage: boolean,
  classOf: ColumnPointerClass,
): string | undefined {
  if (typeof value === 'string') {
    if (storage) return parsePointer(value)?.className;
    return value.includes('$') ? undefined : classOf(key);
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    if (v.__type === 'Pointer' && typeof v.objectId === 'string') return parsePointer(v)?.className;
  }
  return undefined;
}
