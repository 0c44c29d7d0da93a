import { isPlainObject } from '../core/plain-object';
import { isInternalField } from '../query/internal-fields';

/** A pointer column in Parse-on-Mongo storage form: "Class$objectId". */
const STORAGE_POINTER = /^([A-Za-z_][A-Za-z0-9_]*)\$(.+)$/;

/** Parse's encodings of a reference to a row: a pointer, a fetched (included) row, a relation. */
const REFERENCE_TYPES: ReadonlySet<string> = new Set(['Pointer', 'Object', 'Relation']);

/** Typed values that have a display form (see simplifyTypedValue); any other `__type` is data. */
const DISPLAY_TYPES: ReadonlySet<string> = new Set([
  'Date',
  'Pointer',
  'File',
  'GeoPoint',
  'Polygon',
  'Bytes',
  'Relation',
]);

export interface RedactOptions {
  /** Allowlist of a class (wire names), or undefined when the class has none. */
  allowlistFor?: (className: string) => ReadonlySet<string> | undefined;
  /** Class of the top-level rows, whose allowlist applies to them. */
  rootClass?: string;
  /**
   * Display form for typed values (`__type` other than 'Object') and driver Dates, applied in the
   * same walk so rows are copied once; with it, joined rows also lose their `__type` tag.
   */
  simplifyTyped?: (value: Record<string, unknown>) => unknown;
  /**
   * The Pointer and Relation columns of a class, by the schema (and `@BelongsTo`): field -> target
   * class. Only these columns of a row are read as references whatever shape their value has (an
   * objectId, a storage "Class$id" string); every other string is data.
   */
  referenceFieldsOf?: (className: string) => Readonly<Record<string, string>> | undefined;
}

/**
 * Scrubs a response for an agent in one pass, by the schema and Parse's own encodings, never by
 * what a string looks like:
 * - a reference into a class the agent may not see becomes `{ className, __redacted: true }`: a
 *   value in Parse's reference encoding (`__type` 'Pointer', 'Object' or 'Relation' with a
 *   `className`) wherever it sits (arrays of pointers are stored that way), the value of a column
 *   the schema types as a Pointer or Relation whatever its shape, and a `_p_<field>` storage
 *   column's "Class$id";
 * - ACL maps are dropped and internal fields vanish at every depth;
 * - with `allowlistFor`, top-level rows of `rootClass` and joined rows (`__type: 'Object'`) keep
 *   only their class's allowlisted fields. Nested plain JSON is data: no allowlist applies inside.
 * Every other value comes back as stored: a string such as "Total$100" or one naming a hidden
 * class, and a plain object with a `className` key, are content, not references.
 */
export function redact(
  value: unknown,
  isDenied: (className: string) => boolean,
  options: RedactOptions = {},
): unknown {
  return scrub(value, { isDenied, ...options }, options.rootClass);
}

interface Walk {
  isDenied: (className: string) => boolean;
  allowlistFor?: RedactOptions['allowlistFor'];
  simplifyTyped?: RedactOptions['simplifyTyped'];
  referenceFieldsOf?: RedactOptions['referenceFieldsOf'];
}

const redacted = (className: string) => ({ className, __redacted: true });

/** A value in Parse's reference encoding into a denied class. */
function deniedReference(value: Record<string, unknown>, walk: Walk): string | undefined {
  const { __type: type, className } = value;
  return typeof type === 'string' &&
    REFERENCE_TYPES.has(type) &&
    typeof className === 'string' &&
    walk.isDenied(className)
    ? className
    : undefined;
}

function scrub(value: unknown, walk: Walk, rowClass: string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => scrub(v, walk, rowClass));
  if (value instanceof Date) {
    if (!walk.simplifyTyped) return value;
    return Number.isNaN(value.getTime()) ? null : value.toISOString();
  }
  // Strings are data; driver values other than Dates are values, not objects to walk.
  if (!isPlainObject(value)) return value;
  const denied = deniedReference(value, walk);
  if (denied !== undefined) return redacted(denied);
  const joined = value.__type === 'Object';
  if (
    walk.simplifyTyped &&
    typeof value.__type === 'string' &&
    !joined &&
    DISPLAY_TYPES.has(value.__type)
  ) {
    return walk.simplifyTyped(value);
  }
  const own = joined && typeof value.className === 'string' ? value.className : rowClass;
  const allowed = own && walk.allowlistFor ? walk.allowlistFor(own) : undefined;
  const references = own && walk.referenceFieldsOf ? walk.referenceFieldsOf(own) : undefined;
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (isInternalField(key)) continue;
    if (key === '__type' && joined && walk.simplifyTyped) continue;
    if (allowed && !allowed.has(key) && key !== '__type' && key !== 'className') continue;
    const v = value[key];
    if (v === null || typeof v !== 'object') {
      const target = references && typeof v === 'string' ? references[key] : undefined;
      if (target !== undefined) out[key] = referenceString(v as string, target, walk);
      else if (typeof v === 'string' && isStorageColumn(key)) out[key] = storageString(v, walk);
      else out[key] = v;
    } else {
      const target = references?.[key];
      out[key] =
        target !== undefined && isPlainObject(v) && typeof v.className !== 'string'
          ? walk.isDenied(target)
            ? redacted(target)
            : scrub(v, walk, undefined)
          : scrub(v, walk, undefined);
    }
  }
  return out;
}

/** `_p_<field>`: Parse-on-MongoDB's storage column of a pointer, named so by Parse itself. */
const isStorageColumn = (key: string) => key.length > 3 && key.startsWith('_p_');

function storageString(value: string, walk: Walk): unknown {
  const stored = STORAGE_POINTER.exec(value);
  return stored && walk.isDenied(stored[1]) ? redacted(stored[1]) : value;
}

/**
 * A string in a column the schema types as a reference: a storage-form "Class$id" or a bare
 * objectId (PostgreSQL keeps only the id). Its class is the storage prefix or the column's target.
 */
function referenceString(value: string, target: string, walk: Walk): unknown {
  const stored = STORAGE_POINTER.exec(value);
  const className = stored ? stored[1] : target;
  return walk.isDenied(className) ? redacted(className) : value;
}
