import type { DataRow } from '../../ports/data-path';

/**
 * The pure parts of the policed reader's joins: which pointers an `include` names, which keys each
 * read takes, and how joined rows replace pointers. The reader never lets a data path expand an
 * include: it reads every joined class itself, as a direct read of that class (see
 * `PolicedReader`), so a joined row passes the same policy as any other row of its class.
 */

/** A pointer as rows carry it (Parse REST shape). */
export interface PointerRef {
  className: string;
  objectId: string;
}

/** Include paths by their first segment: `['order', 'order.customer']` -> `order: ['customer']`. */
export function includeTree(include: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const path of include) {
    const dot = path.indexOf('.');
    const head = dot < 0 ? path : path.slice(0, dot);
    let below = out.get(head);
    if (!below) out.set(head, (below = []));
    if (dot >= 0) below.push(path.slice(dot + 1));
  }
  return out;
}

/** The keys that reach below `head` (`customer.name` -> `name`); undefined when none do. */
export function keysBelow(keys: readonly string[] | undefined, head: string): string[] | undefined {
  if (!keys?.length) return undefined;
  const prefix = `${head}.`;
  const below = keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  return below.length ? below : undefined;
}

/**
 * The keys a data path is given for rows of one class. A key reaches into another object only
 * through the reader's own joins: a dotted key becomes its first segment (`customer.name` ->
 * `customer`) unless that segment is an Object (JSON) field that no include names. Parse REST
 * reads `keys=customer.name` as an implicit `include=customer` and would join the customer with
 * none of the library's policy, so no other dotted key ever reaches a path.
 */
export function keysForPath(
  keys: readonly string[] | undefined,
  objectFields: ReadonlySet<string>,
  includeHeads: ReadonlySet<string>,
): string[] | undefined {
  if (!keys) return undefined;
  const out = new Set<string>();
  for (const key of keys) {
    const head = key.split('.')[0];
    out.add(head !== key && (includeHeads.has(head) || !objectFields.has(head)) ? head : key);
  }
  return [...out];
}

function asPointer(value: unknown): PointerRef | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (v.__type !== 'Pointer') return undefined;
  if (typeof v.className !== 'string' || typeof v.objectId !== 'string' || !v.objectId) {
    return undefined;
  }
  return { className: v.className, objectId: v.objectId };
}

/** The pointers a field holds: the value itself, or the pointers in an array. */
export function pointersIn(value: unknown): PointerRef[] {
  if (Array.isArray(value)) {
    const out: PointerRef[] = [];
    for (const item of value) {
      const ptr = asPointer(item);
      if (ptr) out.push(ptr);
    }
    return out;
  }
  const ptr = asPointer(value);
  return ptr ? [ptr] : [];
}

/** The map key of a joined row. */
export function joinKey(className: string, objectId: string): string {
  return `${className}$${objectId}`;
}

/**
 * The field value with each pointer replaced by its joined row, when the join returned one; a
 * pointer the join did not return stays the bare pointer it was. A new value: rows a path hands
 * over may be its own (a cache), so they are never changed in place.
 */
export function withJoined(value: unknown, joined: ReadonlyMap<string, DataRow>): unknown {
  const swap = (item: unknown): unknown => {
    const ptr = asPointer(item);
    return (ptr && joined.get(joinKey(ptr.className, ptr.objectId))) ?? item;
  };
  return Array.isArray(value) ? value.map(swap) : swap(value);
}

/** `ids` in slices of at most `size` (one `$in` per slice). */
export function slices<T>(ids: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < ids.length; i += size) out.push(ids.slice(i, i + size));
  return out;
}
