import {
  ALWAYS_KEEP_FIELDS,
  heaviestDroppableField,
  humanBytes,
  sampleRecords,
  weighFields,
} from './field-weights';
import { isRecord } from './is-record';

/** Largest tool result the MCP layer sends (4 MiB of response text). */
export const MAX_TOOL_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Envelope keys whose counts and skip arithmetic no longer hold once rows are cut. */
const STALE_QUERY_KEYS: ReadonlySet<string> = new Set([
  'result_count',
  'truncated',
  'truncated_note',
  'next_call',
]);

/** UTF-8 size of `value` as the dispatcher sends it: compact JSON. */
export function byteLength(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

/**
 * Shrinks an oversized `query_class` json result instead of refusing it: drop the heaviest field
 * (by a sample of rows) from every row, then keep only as many leading rows as fit, and say what
 * happened in `_truncated`. Returns the data unchanged when it already fits, and null when not
 * even one row fits (the caller then refuses with `sizeDiagnostic`). Never mutates `data`.
 */
export function capQueryResult(
  data: Record<string, unknown>,
  maxBytes: number = MAX_TOOL_RESPONSE_BYTES,
): Record<string, unknown> | null {
  if (byteLength(data) <= maxBytes) return data;
  const rows = data.results;
  if (!Array.isArray(rows) || rows.length === 0) return null;

  const dropped = heaviestDroppableField(weighFields(sampleRecords(rows)));
  const trimmed = dropped === undefined ? rows : rows.map((row) => withoutField(row, dropped));
  const context: CapContext = {
    base: withoutStaleKeys(data),
    rows: trimmed,
    dropped,
    skip: originalSkip(data),
    className: typeof data.class_name === 'string' ? data.class_name : undefined,
    maxBytes,
  };

  const whole = recoveredResult(context, trimmed.length);
  if (byteLength(whole) <= maxBytes) return whole;

  // Bound the search cheaply: a prefix whose rows alone pass the cap cannot fit with the envelope.
  let upper = 0;
  let running = 0;
  while (upper < trimmed.length - 1) {
    running += Buffer.byteLength(JSON.stringify(trimmed[upper]) ?? '', 'utf8');
    if (running > maxBytes) break;
    upper += 1;
  }

  // Largest leading slice that fits; every candidate is measured, so the answer is exact.
  let best: Record<string, unknown> | null = null;
  let low = 1;
  let high = upper;
  while (low <= high) {
    const kept = Math.floor((low + high) / 2);
    const candidate = recoveredResult(context, kept);
    if (byteLength(candidate) <= maxBytes) {
      best = candidate;
      low = kept + 1;
    } else {
      high = kept - 1;
    }
  }
  return best;
}

/**
 * The refusal text for a result too large to send (every tool but a recoverable `query_class`).
 * Names the heaviest fields of a few sampled rows (names and sizes, never values) and proposes a
 * positive `keys` list without the heaviest one. The text is shortened as needed so that its JSON
 * form stays within `maxBytes`.
 */
export function sizeDiagnostic(
  toolName: string,
  data: unknown,
  maxBytes: number = MAX_TOOL_RESPONSE_BYTES,
): string {
  const actual = byteLength(data);
  const head = `${toolName} produced ${actual} bytes, more than the ${maxBytes}-byte limit for one tool response.`;
  const advice =
    'Ask for less: a lower limit:, fewer fields via keys: (select: for aggregates), or a narrower where:.';
  const { fieldsLine, keysLine } = describeFields(diagnosticRows(data));

  const candidates = [
    [head, fieldsLine, keysLine, advice],
    [head, fieldsLine, advice],
    [head, advice],
    [head],
    [`Result too large: ${actual} > ${maxBytes} bytes.`],
  ].map((parts) => parts.filter((part): part is string => Boolean(part)).join(' '));
  return (
    candidates.find((text) => byteLength(text) <= maxBytes) ??
    cutToFit(candidates[candidates.length - 1], maxBytes)
  );
}

interface CapContext {
  base: Record<string, unknown>;
  rows: unknown[];
  dropped: string | undefined;
  skip: number;
  className: string | undefined;
  maxBytes: number;
}

function recoveredResult(context: CapContext, kept: number): Record<string, unknown> {
  const { rows, dropped, skip } = context;
  const rowsCut = kept < rows.length;
  const annotation: Record<string, unknown> = {
    reason: 'response_exceeded_max_bytes',
    dropped_fields: dropped === undefined ? [] : [dropped],
    kept_count: kept,
    original_count: rows.length,
  };
  if (rowsCut) annotation.next_skip = skip + kept;
  annotation.hint = truncationHint(context, kept);
  return { ...context.base, results: rows.slice(0, kept), _truncated: annotation };
}

function truncationHint(context: CapContext, kept: number): string {
  const { rows, dropped, skip, className, maxBytes } = context;
  const parts: string[] = [];
  if (dropped !== undefined) {
    parts.push(`Field '${dropped}' was removed from every row to stay under ${maxBytes} bytes.`);
  }
  if (kept < rows.length) {
    parts.push(
      `Only the first ${kept} of ${rows.length} rows fit; repeat the same query_class call ` +
        `with skip: ${skip + kept} for the next page.`,
    );
  }
  if (dropped !== undefined) {
    const target = className === undefined ? '<class>' : JSON.stringify(className);
    parts.push(
      `To read '${dropped}' for one row, call get_object(class_name: ${target}, object_id: <id>).`,
    );
  }
  if (parts.length === 0) {
    parts.push(`Pagination hints were removed to stay under ${maxBytes} bytes.`);
  }
  return parts.join(' ');
}

function withoutStaleKeys(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([key]) => !STALE_QUERY_KEYS.has(key)));
}

function withoutField(row: unknown, field: string): unknown {
  if (!isRecord(row) || !(field in row)) return row;
  const { [field]: _dropped, ...rest } = row;
  return rest;
}

function originalSkip(data: Record<string, unknown>): number {
  const pagination = data.pagination;
  const skip = isRecord(pagination) ? pagination.skip : undefined;
  return typeof skip === 'number' && Number.isFinite(skip) ? skip : 0;
}

/** Rows worth sampling: query/aggregate `results`, `get_objects` values, a single `object`. */
function diagnosticRows(data: unknown): unknown[] {
  if (Array.isArray(data)) return data;
  if (!isRecord(data)) return [];
  // Rendered text (export_data, tabular query_class) has no per-field shape to report on.
  if (typeof data.output === 'string' && Array.isArray(data.headers)) return [];
  if (Array.isArray(data.results)) return data.results;
  if (isRecord(data.objects)) return Object.values(data.objects);
  if (isRecord(data.object)) return [data.object];
  return [];
}

function describeFields(rows: unknown[]): { fieldsLine?: string; keysLine?: string } {
  const sample = sampleRecords(rows);
  if (sample.length === 0) return {};
  const weights = weighFields(sample);
  if (weights.length === 0) return {};
  const top = weights
    .slice(0, 3)
    .map(({ field, bytes }) => `${field} ~${humanBytes(bytes / sample.length)}`);
  const fieldsLine = `Heaviest fields per record: ${top.join(', ')}.`;

  const dropped = heaviestDroppableField(weights);
  if (dropped === undefined) return { fieldsLine };
  // A positive list: models retry more reliably with "ask for these" than with "leave that out".
  const keep = sampledFieldOrder(sample).filter((field) => field !== dropped);
  for (const field of ALWAYS_KEEP_FIELDS) if (!keep.includes(field)) keep.push(field);
  const keysLine = `To leave out ${dropped}, retry with keys: ${JSON.stringify(keep)}.`;
  return { fieldsLine, keysLine };
}

function sampledFieldOrder(sample: ReadonlyArray<Record<string, unknown>>): string[] {
  const seen = new Set<string>();
  for (const row of sample) for (const field of Object.keys(row)) seen.add(field);
  return [...seen];
}

/** Last resort for tiny limits: drop trailing characters until the JSON string fits. */
function cutToFit(text: string, maxBytes: number): string {
  const chars = [...text];
  let low = 0;
  let high = chars.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (byteLength(chars.slice(0, mid).join('')) <= maxBytes) low = mid;
    else high = mid - 1;
  }
  return chars.slice(0, low).join('');
}
