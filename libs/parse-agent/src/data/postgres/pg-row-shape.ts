import type { PgField } from './pg-schema';

/** Parse REST returns these two as plain ISO strings, every other Date as `{__type:'Date', iso}`. */
const PLAIN_DATES = new Set(['createdAt', 'updatedAt']);

function iso(value: unknown): string | undefined {
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : undefined;
}

/** `(x,y)` as node-postgres returns a `point`: x is the longitude, y the latitude (Parse's layout). */
function geoPoint(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && 'x' in value && 'y' in value) {
    const p = value as { x: number; y: number };
    return { __type: 'GeoPoint', latitude: p.y, longitude: p.x };
  }
  return value;
}

/** `((x,y),(x,y),...)` as text: Parse stores polygons as [lng, lat] points; REST gives [lat, lng]. */
function polygon(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const coords = [...value.matchAll(/\(\s*([-\d.eE+]+)\s*,\s*([-\d.eE+]+)\s*\)/g)].map((m) => [
    Number(m[2]),
    Number(m[1]),
  ]);
  return { __type: 'Polygon', coordinates: coords };
}

/** One column value in Parse REST's API shape. */
export function apiValue(name: string, field: PgField | undefined, value: unknown): unknown {
  if (value === null || value === undefined || !field) return value;
  switch (field.type) {
    case 'Pointer':
      return typeof value === 'string'
        ? { __type: 'Pointer', className: field.targetClass, objectId: value }
        : value;
    case 'Date': {
      const text = iso(value);
      if (text === undefined) return value;
      return PLAIN_DATES.has(name) ? text : { __type: 'Date', iso: text };
    }
    case 'File':
      return typeof value === 'string' ? { __type: 'File', name: value } : value;
    case 'GeoPoint':
      return geoPoint(value);
    case 'Polygon':
      return polygon(value);
    default:
      return value;
  }
}

/**
 * A SQL row as Parse REST would return it: pointers as `{__type:'Pointer', className, objectId}`,
 * dates as `{__type:'Date', iso}` (createdAt/updatedAt as ISO strings), files and geo values in
 * their API form, and missing (NULL) fields left out, as Parse leaves them out (aggregate output
 * keeps them: a null group key is an answer).
 */
export function apiRow(
  row: Record<string, unknown>,
  fields: Readonly<Record<string, PgField>>,
  options: { keepNulls?: boolean } = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    if (name.startsWith('__')) continue;
    if (value === undefined || (value === null && !options.keepNulls)) continue;
    const field = Object.prototype.hasOwnProperty.call(fields, name) ? fields[name] : undefined;
    out[name] = apiValue(name, field, value);
  }
  return out;
}
