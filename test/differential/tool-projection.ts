/**
 * The documented projection from what Parse REST returns for a row to what a read tool shows for
 * it (docs/tools.md, "How values come back"). The differential suite compares every value a tool
 * returns with this function applied to Parse REST's answer for the same identity and row; the
 * rules are written out here on their own, not borrowed from the library's formatters, so that a
 * change in the library's output is caught rather than mirrored.
 */
import { isInternalField } from 'nestjs-parse-agent/query/internal-fields';

/** What the projection needs to know about the agent: which classes it may not see. */
export interface ProjectionView {
  isDenied(className: string): boolean;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Parse's encodings of a reference to a row: a pointer, a fetched (included) row, a relation. */
const REFERENCE_TYPES = new Set(['Pointer', 'Object', 'Relation']);

/** Bytes values show their first characters only. */
const BYTES_PREVIEW = 50;

/**
 * A Parse reference into a class the agent may not see, wherever it sits (a pointer column, an
 * array of pointers, object content in Parse's pointer encoding), becomes this marker.
 */
function redactedReference(value: unknown, view: ProjectionView): Json | undefined {
  if (
    isObject(value) &&
    typeof value.__type === 'string' &&
    REFERENCE_TYPES.has(value.__type) &&
    typeof value.className === 'string' &&
    view.isDenied(value.className)
  ) {
    return { className: value.className, __redacted: true };
  }
  return undefined;
}

/** The fields of an object minus what is never shown: `ACL` and internal names, at any depth. */
function shownEntries(value: Json): Array<[string, unknown]> {
  return Object.entries(value).filter(([key]) => key !== 'ACL' && !isInternalField(key));
}

/**
 * Display form (query_class in every format, get_object, get_objects, get_sample_objects,
 * export_data): Parse typed values are shown compactly (a Date as its ISO string, a Pointer as
 * "Class$objectId", a fetched row without its `__type` tag, Bytes cut to a preview, File, GeoPoint,
 * Polygon and Relation with their defining fields only); a reference into a class the agent may
 * not see is the redaction marker; `ACL` and internal fields are left out at every depth; every
 * other value (strings with `$` and "Class$id"-like text included) is exactly what Parse returned.
 */
export function displayValue(value: unknown, view: ProjectionView): unknown {
  if (Array.isArray(value)) return value.map((v) => displayValue(v, view));
  if (!isObject(value)) return value;
  const redacted = redactedReference(value, view);
  if (redacted) return redacted;
  switch (value.__type) {
    case 'Date':
      return value.iso ?? null;
    case 'Pointer':
      return typeof value.className === 'string' && typeof value.objectId === 'string'
        ? `${value.className}$${value.objectId}`
        : {
            __type: 'Pointer',
            className: value.className ?? null,
            objectId: value.objectId ?? null,
          };
    case 'Object': {
      const out: Json = {};
      for (const [key, v] of shownEntries(value))
        if (key !== '__type') out[key] = displayValue(v, view);
      return out;
    }
    case 'File':
      return { __type: 'File', name: value.name ?? null, url: value.url ?? null };
    case 'GeoPoint':
      return {
        __type: 'GeoPoint',
        latitude: value.latitude ?? null,
        longitude: value.longitude ?? null,
      };
    case 'Polygon':
      return { __type: 'Polygon', coordinates: displayValue(value.coordinates ?? null, view) };
    case 'Bytes': {
      const b = value.base64;
      return {
        __type: 'Bytes',
        base64:
          typeof b !== 'string'
            ? null
            : b.length > BYTES_PREVIEW
              ? `${b.slice(0, BYTES_PREVIEW)}...`
              : b,
      };
    }
    case 'Relation':
      return { __type: 'Relation', className: value.className ?? null };
    default: {
      const out: Json = {};
      for (const [key, v] of shownEntries(value)) out[key] = displayValue(v, view);
      return out;
    }
  }
}

export function displayRow(row: Json, view: ProjectionView): Json {
  return displayValue(row, view) as Json;
}

/**
 * Pipeline form (aggregate rows): values as Parse REST's JSON encodes them (dates as
 * `{ __type: 'Date', iso }`, createdAt/updatedAt as ISO strings), with `ACL`, internal fields and
 * references into classes the agent may not see handled as in the display form. Pointer columns
 * into such classes are not readable in a pipeline at all, so they are absent from these rows.
 * Compaction (the default) is applied afterwards by `compactColumns`.
 */
export function pipelineValue(value: unknown, view: ProjectionView): unknown {
  if (Array.isArray(value)) return value.map((v) => pipelineValue(v, view));
  if (!isObject(value)) return value;
  const redacted = redactedReference(value, view);
  if (redacted) return redacted;
  const out: Json = {};
  for (const [key, v] of shownEntries(value)) out[key] = pipelineValue(v, view);
  return out;
}

/**
 * `compact_pointers` (default true): a top-level column whose values are all Pointers to one class
 * (or missing/null) holds bare objectIds, and the class is named once in `pointer_classes`.
 */
export function compactColumns(rows: Json[]): { rows: Json[]; pointerClasses: Json } {
  const classes = new Map<string, string | null>();
  for (const row of rows) {
    for (const [key, value] of Object.entries(row)) {
      if (value === null || value === undefined) continue;
      const known = classes.get(key);
      if (known === null) continue;
      const isPointer =
        isObject(value) &&
        value.__type === 'Pointer' &&
        typeof value.className === 'string' &&
        typeof value.objectId === 'string';
      if (!isPointer || (known !== undefined && known !== value.className)) classes.set(key, null);
      else classes.set(key, value.className as string);
    }
  }
  const pointerClasses: Json = {};
  for (const [key, cls] of classes) if (cls) pointerClasses[key] = cls;
  const out = rows.map((row) => {
    const next: Json = {};
    for (const [key, value] of Object.entries(row)) {
      next[key] =
        key in pointerClasses && isObject(value) ? (value.objectId as string) : (value ?? null);
    }
    return next;
  });
  return { rows: out, pointerClasses };
}

/**
 * A value as a group key or distinct value: a Date is its ISO string; in a Pointer column a
 * pointer is its bare objectId (the class is named once, `pointer_class`); anything else is the
 * pipeline form (a pointer inside an array stays a Pointer object).
 */
export function keyValue(value: unknown, view: ProjectionView, pointerColumn = false): unknown {
  if (isObject(value) && value.__type === 'Date' && typeof value.iso === 'string') return value.iso;
  if (
    pointerColumn &&
    isObject(value) &&
    value.__type === 'Pointer' &&
    typeof value.objectId === 'string'
  ) {
    return value.objectId;
  }
  return pipelineValue(value, view);
}

/** Text of one CSV cell: empty for a missing value or null, JSON for structures, text otherwise. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** RFC 4180 parsing: quoted fields may hold commas, quotes (doubled) and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (text.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** A stable text for a value, to compare sets and maps of values. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}
