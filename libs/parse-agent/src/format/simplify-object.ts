import { isPlainRecord } from '../core/plain-object';

/** Removed at every level: ACL maps are enforcement data, not content, and name users and roles. */
const DROPPED_KEYS: ReadonlySet<string> = new Set(['ACL']);

/** Bytes fields are opaque to a model; a short prefix shows that data exists without paying for it. */
const BYTES_PREVIEW_CHARS = 50;

/**
 * Turns Parse REST JSON into the shape the model reads: a pointer becomes the string
 * "Class$objectId", which a `where` on that pointer field accepts unchanged (one shape in prompts,
 * results and queries); dates become ISO strings; other typed values keep Parse's own wire shape
 * (File, GeoPoint, Polygon, Relation), Bytes a short preview; `ACL` is dropped everywhere; included
 * objects are simplified like top-level rows. Returns a new structure; the input is never mutated.
 */
export function simplifyObject(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(simplifyObject);
  // The direct MongoDB path can hand back driver Dates instead of `{__type:'Date'}` wrappers.
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (!isPlainRecord(value)) return value;
  return simplifyPlain(value);
}

/** `simplifyObject` for a row: rows are records, never bare typed values, so the result is one too. */
export function simplifyRow(row: Record<string, unknown>): Record<string, unknown> {
  return simplifyObject(row) as Record<string, unknown>;
}

function simplifyPlain(value: Record<string, unknown>): unknown {
  if (value.__type === 'Object') {
    // An included (fetched) pointer: keep className/objectId and its fields, lose the wrapper tag.
    const { __type: _wrapper, ...fields } = value;
    return simplifyFields(fields);
  }
  return typeof value.__type === 'string' ? simplifyTypedValue(value) : simplifyFields(value);
}

/**
 * The display form of one Parse typed value (`__type` other than 'Object'). Exported so the read
 * policy's redaction walk can simplify in the same pass (see `ReadPolicy.redactRows`).
 */
export function simplifyTypedValue(value: Record<string, unknown>): unknown {
  switch (value.__type) {
    case 'Date':
      return value.iso ?? null;
    case 'Pointer':
      // "Class$objectId": a quarter of the tokens of the wrapper object, and the very string a
      // where constraint on the pointer field accepts (see normalizeWhere).
      return typeof value.className === 'string' && typeof value.objectId === 'string'
        ? `${value.className}$${value.objectId}`
        : {
            __type: 'Pointer',
            className: value.className ?? null,
            objectId: value.objectId ?? null,
          };
    case 'File':
      return { __type: 'File', name: value.name ?? null, url: value.url ?? null };
    case 'GeoPoint':
      return {
        __type: 'GeoPoint',
        latitude: value.latitude ?? null,
        longitude: value.longitude ?? null,
      };
    case 'Polygon':
      return { __type: 'Polygon', coordinates: simplifyObject(value.coordinates ?? null) };
    case 'Bytes':
      return { __type: 'Bytes', base64: previewBase64(value.base64) };
    case 'Relation':
      return { __type: 'Relation', className: value.className ?? null };
    default:
      return simplifyFields(value);
  }
}

function simplifyFields(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (DROPPED_KEYS.has(key)) continue;
    out[key] = simplifyObject(field);
  }
  return out;
}

function previewBase64(base64: unknown): string | null {
  if (typeof base64 !== 'string') return null;
  // Only mark the value as cut when something was actually cut.
  return base64.length > BYTES_PREVIEW_CHARS
    ? `${base64.slice(0, BYTES_PREVIEW_CHARS)}...`
    : base64;
}
