/**
 * Pointer compaction for aggregate output. On Parse-on-Mongo a pointer comes back as the storage
 * column `_p_<field>: "<Class>$<objectId>"`; the repeated prefix costs bytes and confuses models, so
 * results carry the bare objectId and the class once, in `pointer_classes` / `pointer_class`.
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

/**
 * Rewrites top-level `_p_<field>` columns of aggregate rows to `<field>` holding the bare objectId and
 * reports each column's class. A column is left as it is when its class varies between rows, when a
 * value is not a pointer string, or when some row already has both `_p_<field>` and `<field>`.
 */
export function compactPointers(rows: readonly Record<string, unknown>[]): {
  rows: Record<string, unknown>[];
  pointerClasses: Record<string, string>;
} {
  const columns = new Map<string, string | null>(); // storage column -> class, null = leave raw
  for (const row of rows) {
    for (const [key, value] of Object.entries(row)) {
      if (!key.startsWith('_p_') || key.length <= 3) continue;
      const field = key.slice(3);
      const known = columns.get(key);
      if (known === null) continue;
      if (field in row) {
        columns.set(key, null);
        continue;
      }
      if (value === null || value === undefined) {
        if (known === undefined) columns.set(key, '');
        continue;
      }
      const ref = typeof value === 'string' ? parsePointer(value) : undefined;
      if (!ref || (known && ref.className !== known)) columns.set(key, null);
      else columns.set(key, ref.className);
    }
  }
  const pointerClasses: Record<string, string> = {};
  for (const [key, cls] of columns) if (cls) pointerClasses[key.slice(3)] = cls;
  const out = rows.map((row) => {
    const next: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) {
      const cls = columns.get(key);
      if (!cls) {
        next[key] = value;
        continue;
      }
      next[key.slice(3)] =
        typeof value === 'string' ? (parsePointer(value)?.objectId ?? value) : value;
    }
    return next;
  });
  return { rows: out, pointerClasses };
}
