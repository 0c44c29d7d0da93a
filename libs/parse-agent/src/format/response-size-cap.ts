import {
  ALWAYS_KEEP_FIELDS,
  heaviestDroppableField,
  humanBytes,
  sampleRecords,
  weighFields,
} from './field-weights';
import { isPlainRecord } from '../core/plain-object';

/** Largest tool result the MCP layer sends (4 MiB of response text). */
export const MAX_TOOL_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * Who the oversized result is for: the tool and the arguments its input schema declares, so that
 * every hint names only arguments that tool takes, and the call's own arguments (for paging).
 */
export interface OversizeContext {
  toolName: string;
  /** The argument names of the tool's input schema. */
  argumentNames: readonly string[];
  /** The arguments of the call that produced the result. */
  args?: Record<string, unknown>;
}

/** UTF-8 size of `value` as the dispatcher sends it: compact JSON. */
export function byteLength(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

/**
 * Where a result keeps its rows, and the count beside them that must follow a cut. `droppable`:
 * rows are objects of a class whose heaviest field may be left out (query rows, samples);
 * analytics groups and distinct values are only cut, never changed.
 */
const ROW_LISTS: ReadonlyArray<{ key: string; count?: string; droppable: boolean }> = [
  { key: 'results', count: 'result_count', droppable: true },
  { key: 'samples', count: 'sample_count', droppable: true },
  { key: 'groups', count: 'group_count', droppable: false },
  { key: 'values', count: 'count', droppable: false },
];

/** Keys of a query result that no longer hold once rows are cut (paging starts from next_skip). */
const STALE_KEYS: readonly string[] = ['truncated', 'truncated_note', 'next_call'];

/**
 * Shrinks an oversized tool result instead of refusing it, for every result that carries rows:
 * a list (`results`, `samples`, `groups`, `values`), a map of objects (`objects`) or one object
 * (`object`). Rows lose their heaviest field (judged on a sample), then as many leading rows as fit
 * are kept; one object loses its heaviest fields until it fits. `_truncated` says what was left
 * out, how to get the rest (`next_skip`, the ids not returned) and, in `hint`, how to ask with the
 * tool's own arguments. Returns the data unchanged when it fits, and null when nothing useful fits
 * (the caller then refuses with `sizeDiagnostic`). Never mutates `data`.
 */
export function capToolResult(
  data: Record<string, unknown>,
  maxBytes: number,
  context: OversizeContext,
): Record<string, unknown> | null {
  if (byteLength(data) <= maxBytes) return data;
  for (const list of ROW_LISTS) {
    const rows = data[list.key];
    if (Array.isArray(rows) && rows.length) return capList(data, list, rows, maxBytes, context);
  }
  if (isPlainRecord(data.objects) && Object.keys(data.objects).length) {
    return capObjects(data, data.objects, maxBytes, context);
  }
  if (isPlainRecord(data.object)) return capObject(data, data.object, maxBytes, context);
  return null;
}

/** A `query_class` json result (kept for its callers): capToolResult with query_class's arguments. */
export function capQueryResult(
  data: Record<string, unknown>,
  maxBytes: number = MAX_TOOL_RESPONSE_BYTES,
): Record<string, unknown> | null {
  return capToolResult(data, maxBytes, {
    toolName: 'query_class',
    argumentNames: ['class_name', 'where', 'keys', 'include', 'order', 'limit', 'skip', 'format'],
  });
}

interface Cut {
  base: Record<string, unknown>;
  rows: unknown[];
  dropped: string[];
  maxBytes: number;
  context: OversizeContext;
}

function capList(
  data: Record<string, unknown>,
  list: (typeof ROW_LISTS)[number],
  rows: unknown[],
  maxBytes: number,
  context: OversizeContext,
): Record<string, unknown> | null {
  const dropped = list.droppable
    ? heaviestDroppableField(weighFields(sampleRecords(rows)))
    : undefined;
  const trimmed = dropped === undefined ? rows : rows.map((row) => withoutField(row, dropped));
  const base = Object.fromEntries(Object.entries(data).filter(([k]) => !STALE_KEYS.includes(k)));
  const cut: Cut = {
    base,
    rows: trimmed,
    dropped: dropped === undefined ? [] : [dropped],
    maxBytes,
    context,
  };
  const build = (kept: number) => {
    const out: Record<string, unknown> = { ...cut.base };
    if (list.count && list.count in out) out[list.count] = kept;
    out[list.key] = cut.rows.slice(0, kept);
    out._truncated = listAnnotation(cut, kept, startOf(data, context));
    return out;
  };
  return largestFitting(trimmed, build, maxBytes);
}

function capObjects(
  data: Record<string, unknown>,
  objects: Record<string, unknown>,
  maxBytes: number,
  context: OversizeContext,
): Record<string, unknown> | null {
  const entries = Object.entries(objects);
  const dropped = heaviestDroppableField(weighFields(sampleRecords(entries.map(([, v]) => v))));
  const trimmed = entries.map(
    ([id, object]) => [id, dropped === undefined ? object : withoutField(object, dropped)] as const,
  );
  const cut: Cut = {
    base: data,
    rows: trimmed,
    dropped: dropped === undefined ? [] : [dropped],
    maxBytes,
    context,
  };
  const build = (kept: number) => {
    const rest = trimmed.slice(kept).map(([id]) => id);
    const annotation = annotationBase(cut, kept);
    if (rest.length) annotation.not_returned = rest;
    annotation.hint = hintText([
      droppedSentence(cut),
      rest.length ? objectsLeftSentence(cut, kept) : undefined,
      oneRowSentence(cut, data),
    ]);
    return { ...data, objects: Object.fromEntries(trimmed.slice(0, kept)), _truncated: annotation };
  };
  return largestFitting(trimmed, build, maxBytes);
}

/** One object: its heaviest fields go, one at a time, until the result fits. */
function capObject(
  data: Record<string, unknown>,
  object: Record<string, unknown>,
  maxBytes: number,
  context: OversizeContext,
): Record<string, unknown> | null {
  let current = object;
  const dropped: string[] = [];
  for (;;) {
    const field = heaviestDroppableField(weighFields([current]));
    if (field === undefined) return null;
    current = withoutField(current, field) as Record<string, unknown>;
    dropped.push(field);
    const cut: Cut = { base: data, rows: [current], dropped, maxBytes, context };
    const annotation = annotationBase(cut, 1);
    annotation.hint = hintText([droppedSentence(cut), includeSentence(cut, object)]);
    const out = { ...data, object: current, _truncated: annotation };
    if (byteLength(out) <= maxBytes) return out;
  }
}

/** The result with the most leading rows that fits; every candidate is measured, so it is exact. */
function largestFitting(
  rows: readonly unknown[],
  build: (kept: number) => Record<string, unknown>,
  maxBytes: number,
): Record<string, unknown> | null {
  const whole = build(rows.length);
  if (byteLength(whole) <= maxBytes) return whole;
  // Bound the search cheaply: a prefix whose rows alone pass the cap cannot fit with the envelope.
  let upper = 0;
  let running = 0;
  while (upper < rows.length - 1) {
    running += Buffer.byteLength(JSON.stringify(rows[upper]) ?? '', 'utf8');
    if (running > maxBytes) break;
    upper += 1;
  }
  let best: Record<string, unknown> | null = null;
  let low = 1;
  let high = upper;
  while (low <= high) {
    const kept = Math.floor((low + high) / 2);
    const candidate = build(kept);
    if (byteLength(candidate) <= maxBytes) {
      best = candidate;
      low = kept + 1;
    } else {
      high = kept - 1;
    }
  }
  return best;
}

function annotationBase(cut: Cut, kept: number): Record<string, unknown> {
  return {
    reason: 'response_exceeded_max_bytes',
    dropped_fields: cut.dropped,
    kept_count: kept,
    original_count: cut.rows.length,
  };
}

function listAnnotation(cut: Cut, kept: number, start: number): Record<string, unknown> {
  const annotation = annotationBase(cut, kept);
  const rowsCut = kept < cut.rows.length;
  const pages = has(cut, 'skip') || has(cut, 'pipeline');
  if (rowsCut && pages) annotation.next_skip = start + kept;
  annotation.hint = hintText([
    droppedSentence(cut),
    rowsCut ? rowsLeftSentence(cut, kept, start) : undefined,
    oneRowSentence(cut, cut.base),
  ]);
  return annotation;
}

const has = (cut: Cut, argument: string) => cut.context.argumentNames.includes(argument);

function hintText(parts: Array<string | undefined>): string {
  const text = parts.filter((p): p is string => Boolean(p)).join(' ');
  return text || 'Pagination hints were removed to stay under the size limit.';
}

function droppedSentence(cut: Cut): string | undefined {
  if (!cut.dropped.length) return undefined;
  const names = cut.dropped.map((f) => `'${f}'`).join(', ');
  const where = cut.rows.length > 1 ? ' from every row' : '';
  const parts = [
    `${cut.dropped.length > 1 ? 'Fields' : 'Field'} ${names} ${cut.dropped.length > 1 ? 'were' : 'was'} removed${where} to stay under ${cut.maxBytes} bytes.`,
  ];
  if (has(cut, 'keys')) parts.push('Name the fields you need in keys: to choose them yourself.');
  else if (has(cut, 'pipeline')) {
    const exclude = Object.fromEntries(cut.dropped.map((f) => [f, 0]));
    parts.push(
      `To leave it out yourself, end pipeline: with {"$project":${JSON.stringify(exclude)}}.`,
    );
  }
  return parts.join(' ');
}

function rowsLeftSentence(cut: Cut, kept: number, start: number): string {
  const head = `Only the first ${kept} of ${cut.rows.length} rows fit;`;
  if (has(cut, 'skip'))
    return `${head} repeat the same call with skip: ${start + kept} for the next page.`;
  if (has(cut, 'pipeline')) {
    return `${head} for the next ones, run the same pipeline: with {"$skip":${start + kept}} appended (after a $sort, so the order holds).`;
  }
  if (has(cut, 'limit')) return `${head} ask for fewer with limit: ${kept}.`;
  return `${head} the rest were left out.`;
}

function objectsLeftSentence(cut: Cut, kept: number): string {
  const head = `Only ${kept} of ${cut.rows.length} objects fit; the others are listed in not_returned.`;
  return has(cut, 'ids') ? `${head} Pass them as ids: in another call to read them.` : head;
}

/** Reading a dropped field for one row is a get_object call, for tools that return class rows. */
function oneRowSentence(cut: Cut, data: Record<string, unknown>): string | undefined {
  if (!cut.dropped.length || has(cut, 'pipeline') || cut.context.toolName === 'get_object') {
    return undefined;
  }
  const rows = cut.rows.map((r) => (Array.isArray(r) ? r[1] : r));
  if (!rows.some((r) => isPlainRecord(r) && typeof r.objectId === 'string')) return undefined;
  const className =
    typeof data.class_name === 'string' ? JSON.stringify(data.class_name) : '<class>';
  return `To read '${cut.dropped[0]}' for one row, call get_object(class_name: ${className}, object_id: <id>).`;
}

/** A single object made large by included pointers: leaving them out of include helps. */
function includeSentence(cut: Cut, object: Record<string, unknown>): string | undefined {
  if (!has(cut, 'include')) return undefined;
  const joined = cut.dropped.filter(
    (f) => isPlainRecord(object[f]) && object[f].className !== undefined,
  );
  if (!joined.length) return undefined;
  return `${joined.map((f) => `'${f}'`).join(', ')} came from include: ask without it for a smaller object.`;
}

/** Where this page starts: query_class's pagination.skip, else the call's skip, else 0. */
function startOf(data: Record<string, unknown>, context: OversizeContext): number {
  const pagination = data.pagination;
  const skip = isPlainRecord(pagination) ? pagination.skip : context.args?.skip;
  return typeof skip === 'number' && Number.isFinite(skip) && skip >= 0 ? skip : 0;
}

function withoutField(row: unknown, field: string): unknown {
  if (!isPlainRecord(row) || !(field in row)) return row;
  const { [field]: _dropped, ...rest } = row;
  return rest;
}

/**
 * The refusal text for a result too large to send that could not be cut down. Names the heaviest
 * fields of a few sampled rows (names and sizes, never values) and how to ask for less, with the
 * tool's own arguments only. The text is shortened as needed so that its JSON form stays within
 * `maxBytes`.
 */
export function sizeDiagnostic(data: unknown, maxBytes: number, context: OversizeContext): string {
  const actual = byteLength(data);
  const head = `${context.toolName} produced ${actual} bytes, more than the ${maxBytes}-byte limit for one tool response.`;
  const advice = adviceFor(context.argumentNames);
  const { fieldsLine, keysLine } = describeFields(diagnosticRows(data), context.argumentNames);

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

/** How to ask for less, in the tool's own arguments (each written `name:`). */
const ADVICE: ReadonlyArray<[string, string]> = [
  ['limit', 'a lower limit:'],
  ['row_cap', 'a lower row_cap:'],
  ['ids', 'fewer ids:'],
  ['keys', 'fewer fields in keys:'],
  ['columns', 'fewer columns:'],
  ['pipeline', 'a $project or $limit stage in pipeline:'],
  ['where', 'a narrower where:'],
];

function adviceFor(argumentNames: readonly string[]): string {
  const parts = ADVICE.filter(([name]) => argumentNames.includes(name)).map(([, text]) => text);
  if (!parts.length) return 'Ask for less.';
  const list =
    parts.length > 1 ? `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}` : parts[0];
  return `Ask for less with ${list}.`;
}

/** Rows worth sampling: `results`/`samples` lists, `get_objects` values, a single `object`. */
function diagnosticRows(data: unknown): unknown[] {
  if (Array.isArray(data)) return data;
  if (!isPlainRecord(data)) return [];
  // Rendered text (export_data, tabular query_class) has no per-field shape to report on.
  if (typeof data.output === 'string' && Array.isArray(data.headers)) return [];
  if (Array.isArray(data.results)) return data.results;
  if (Array.isArray(data.samples)) return data.samples;
  if (isPlainRecord(data.objects)) return Object.values(data.objects);
  if (isPlainRecord(data.object)) return [data.object];
  return [];
}

function describeFields(
  rows: unknown[],
  argumentNames: readonly string[],
): { fieldsLine?: string; keysLine?: string } {
  const sample = sampleRecords(rows);
  if (sample.length === 0) return {};
  const weights = weighFields(sample);
  if (weights.length === 0) return {};
  const top = weights
    .slice(0, 3)
    .map(({ field, bytes }) => `${field} ~${humanBytes(bytes / sample.length)}`);
  const fieldsLine = `The heaviest fields per record are ${top.join(', ')}.`;

  const dropped = heaviestDroppableField(weights);
  if (dropped === undefined) return { fieldsLine };
  if (argumentNames.includes('keys')) {
    // A positive list: models retry more reliably with "ask for these" than with "leave that out".
    const keep = sampledFieldOrder(sample).filter((field) => field !== dropped);
    for (const field of ALWAYS_KEEP_FIELDS) if (!keep.includes(field)) keep.push(field);
    return {
      fieldsLine,
      keysLine: `To leave out ${dropped}, retry with keys: ${JSON.stringify(keep)}.`,
    };
  }
  if (argumentNames.includes('pipeline')) {
    const stage = JSON.stringify({ $project: { [dropped]: 0 } });
    return { fieldsLine, keysLine: `To leave out ${dropped}, end pipeline: with ${stage}.` };
  }
  return { fieldsLine };
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
