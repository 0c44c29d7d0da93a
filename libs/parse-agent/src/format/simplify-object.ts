import { isRecord } from './is-record';

/** Removed at every level: ACL maps are enforcement data, not content, and name users and roles. */
const DROPPED_KEYS: ReadonlySet<string> = new Set(['ACL']);

/** Bytes fields are opaque to a model; a short prefix shows that data exists without paying for it. */
const BYTES_PREVIEW_CHARS = 50;

/**
 * Turns Parse REST JSON into the compact shape the model reads: typed wrappers (`__type`) become
 * small `_type` objects or plain strings, `ACL` is dropped everywhere, included objects are
 * simplified like top-level rows. Returns a new structure; the input is never mutated.
 */
export function simplifyObject(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(simplifyObject);
  // The direct MongoDB path can hand back driver Dates instead of `{__type:'Date'}` wrappers.
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (!isRecord(value)) return value;
  return simplifyPlain(value);
}

/** `simplifyObject` for a row: rows are records, never bare typed values, so the result is one too. */
export function simplifyRow(row: Record<string, unknown>): Record<string, unknown> {
  return simplifyObject(row) as Record<string, unknown>;
}

function simplifyPlain(value: Record<string, unknown>): unknown {
  switch (value.__type) {
    case 'Date':
      return value.iso ?? null;
    case 'Pointer':
      return { _type: 'Pointer', class: value.className ?? null, id: value.objectId ?? null };
    case 'File':
      return { _type: 'File', name: value.name ?? null, url: value.url ?? null };
    case 'GeoPoint':
      return {
        _type: 'GeoPoint',
        latitude: value.latitude ?? null,
        longitude: value.longitude ?? null,
      };
    case 'Polygon':
      return { _type: 'Polygon', coordinates: simplifyObject(value.coordinates ?? null) };
    case 'Bytes':
      return { _type: 'Bytes', base64: previewBase64(value.base64) };
    case 'Relation':
      return { _type: 'Relation', class: value.className ?? null };
    case 'Object': {
      // An included (fetched) pointer: keep className/objectId and its fields, lose the wrapper tag.
      const { __type: _wrapper, ...fields } = value;
      return simplifyFields(fields);
    }
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
