/**
 * Shapes for the PostgreSQL pipeline oracle (test/data/postgres-pipeline-oracle.spec.ts): REST rows
 * as pipeline input for mingo, one canonical form for both answers, the docs samples, and an
 * Intl-based reading of dates in time zones.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stage } from './pipeline-generator';

type Row = Record<string, unknown>;

/** $addToSet outputs of the docs samples: sets, compared in any order. */
const SET_FIELDS = new Set(['statuses']);

/** A REST row as pipeline input: pointers as objectIds, dates as Dates, no ACL. */
export function asDocument(row: Row, allowed?: string[]): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) {
    if (k === 'ACL') continue;
    if (allowed && !allowed.includes(k)) continue;
    if (k === 'createdAt' || k === 'updatedAt') out[k] = new Date(v as string);
    else if (isTyped(v, 'Pointer')) out[k] = (v as Row).objectId;
    else if (isTyped(v, 'Date')) out[k] = new Date((v as Row).iso as string);
    else out[k] = v;
  }
  return out;
}

/** A deep copy (mingo's $addFields writes into nested documents), Dates kept as Dates. */
export function cloneDoc(value: unknown): unknown {
  if (isDate(value)) return new Date((value as Date).getTime());
  if (Array.isArray(value)) return value.map(cloneDoc);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cloneDoc(v)]));
  }
  return value;
}

export const isDate = (v: unknown) => Object.prototype.toString.call(v) === '[object Date]';

export const isTyped = (v: unknown, type: string) =>
  typeof v === 'object' && v !== null && (v as Row).__type === type;

/** `{__type:'Date', iso}` literals in a pipeline as Dates, for mingo. */
export function forMingo(value: unknown): unknown {
  // mingo 7 answers `$count` over no rows with a count of 0, MongoDB with no row: the $group it
  // stands for answers as MongoDB does.
  if (Array.isArray(value))
    return value.flatMap((v) => (isCountStage(v) ? countStages(v) : [forMingo(v)]));
  if (isTyped(value, 'Date')) return new Date((value as Row).iso as string);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, forMingo(v)]));
  }
  return value;
}

function isCountStage(v: unknown): v is { $count: string } {
  return (
    typeof v === 'object' &&
    v !== null &&
    Object.keys(v).length === 1 &&
    typeof (v as Row).$count === 'string'
  );
}

function countStages(v: { $count: string }): unknown[] {
  return [{ $group: { _id: null, [v.$count]: { $sum: 1 } } }, { $project: { _id: 0 } }];
}

/**
 * One canonical form for both answers: dates as ISO strings, pointers as objectIds, numbers to 9
 * significant digits, null and missing the same (left out), `set_*` arrays as sets.
 */
export function canonical(value: unknown, key = ''): unknown {
  if (value === null || value === undefined) return undefined;
  if (isDate(value)) return (value as Date).toISOString();
  if (typeof value === 'number') return Number(value.toPrecision(9)) + 0;
  if (Array.isArray(value)) {
    const items = value.map((v) => canonical(v) ?? null);
    return key.startsWith('set_') || SET_FIELDS.has(key) ? items.sort(byJson) : items;
  }
  if (typeof value === 'object') {
    const row = value as Row;
    if (row.__type === 'Date') return new Date(row.iso as string).toISOString();
    if (row.__type === 'Pointer') return row.objectId;
    const out: Row = {};
    for (const k of Object.keys(row).sort()) {
      const v = canonical(row[k], k);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }
  return value;
}

export const byJson = (a: unknown, b: unknown) => {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** The `pipeline: [...]` of every aggregate sample in docs/analytics-postgres.md (JSON syntax). */
export function docsPipelines(): Stage[][] {
  const text = readFileSync(join(__dirname, '..', '..', 'docs', 'analytics-postgres.md'), 'utf8');
  const out: Stage[][] = [];
  for (const block of text.split('```ts').slice(1)) {
    const code = block.slice(0, block.indexOf('```'));
    if (!code.includes("execute('aggregate'")) continue;
    const start = code.indexOf('pipeline: ') + 'pipeline: '.length;
    let depth = 0;
    let end = start;
    for (; end < code.length; end++) {
      if (code[end] === '[') depth += 1;
      if (code[end] === ']') depth -= 1;
      if (depth === 0) break;
    }
    out.push(JSON.parse(code.slice(start, end + 1)) as Stage[]);
  }
  return out;
}

export const pad = (n: number) => String(n).padStart(2, '0');

/** Wall-clock parts of an instant in a zone, from Intl (an implementation independent of SQL). */
export function localParts(at: Date, timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    weekday: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(parts.weekday) + 1,
  };
}

/** The instant local midnight of a date occurs in a zone. */
export function zonedMidnight(year: number, month: number, day: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day);
  let t = wall;
  for (let i = 0; i < 3; i++) {
    const p = localParts(new Date(t), timeZone);
    const shown = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
    t = t + (wall - shown);
  }
  return new Date(t);
}
