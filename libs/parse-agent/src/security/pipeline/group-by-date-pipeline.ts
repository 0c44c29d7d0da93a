/**
 * The `group_by_date` helper: buckets a date field with `$dateTrunc` (time zone aware on MongoDB 5+)
 * and formats each bucket start as a readable key ("2024-11", "2024-W48", "2024-11-25 13:00").
 */
import { AgentValidationError } from '../../core/errors';
import {
  accumulatorFor,
  assertFieldArgument,
  GROUP_BY_DEFAULT_LIMIT,
  GROUP_BY_MAX_LIMIT,
  GroupOperation,
  GroupRow,
  GroupSort,
  resolveLimit,
  sourceOf,
  sortStage,
  whereStages,
} from './group-by-pipeline';
import type { Pipeline, Where } from './pipeline-policy';

export const DATE_INTERVALS = [
  'year',
  'quarter',
  'month',
  'week',
  'day',
  'hour',
  'minute',
  'second',
] as const;
export type DateInterval = (typeof DATE_INTERVALS)[number];

export interface GroupByDateParams {
  field: string;
  interval: DateInterval;
  /** IANA name ("America/New_York") or fixed offset ("+05:30"); UTC when omitted. */
  timezone?: string;
  where?: Where;
  operation?: GroupOperation;
  valueField?: string;
  limit?: number;
  /** Defaults to key_asc (chronological). */
  sort?: GroupSort;
}

const OFFSET = /^([+-])(\d{2}):?(\d{2})?$/;

/** Accepts an IANA zone or a fixed offset; refuses anything else with how to write it. */
export function assertTimezone(timezone: unknown): asserts timezone is string {
  if (typeof timezone === 'string') {
    const m = OFFSET.exec(timezone);
    if (m && Number(m[2]) <= 14 && Number(m[3] ?? 0) < 60) return;
    if (!m && /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(timezone)) {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: timezone });
        return;
      } catch {
        // fall through
      }
    }
  }
  throw new AgentValidationError(
    `Unknown timezone ${JSON.stringify(timezone)}. Use an IANA name such as "America/New_York" or an ` +
      `offset such as "+05:30".`,
  );
}

export function assertInterval(interval: unknown): asserts interval is DateInterval {
  if (typeof interval !== 'string' || !(DATE_INTERVALS as readonly string[]).includes(interval)) {
    throw new AgentValidationError(
      `Unknown interval ${JSON.stringify(interval)}. Use one of: ${DATE_INTERVALS.join(', ')}.`,
    );
  }
}

export function buildGroupByDatePipeline(params: GroupByDateParams): Pipeline {
  assertFieldArgument('field', params.field);
  assertInterval(params.interval);
  if (params.timezone !== undefined) assertTimezone(params.timezone);
  const value = accumulatorFor(params.operation, params.valueField);
  const limit = resolveLimit(params.limit, GROUP_BY_DEFAULT_LIMIT, GROUP_BY_MAX_LIMIT);
  const trunc: Record<string, unknown> = { date: `$${params.field}`, unit: params.interval };
  if (params.timezone !== undefined && params.timezone !== 'UTC') trunc.timezone = params.timezone;
  // ISO weeks start on Monday, matching the "YYYY-Www" keys.
  if (params.interval === 'week') trunc.startOfWeek = 'monday';
  return [
    ...whereStages(params.where),
    { $group: { _id: { $dateTrunc: trunc }, value } },
    sortStage(params.sort, 'key_asc'),
    { $limit: limit + 1 },
  ];
}

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function toDate(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value === 'string') {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  if (typeof value === 'object' && value !== null) {
    const v = value as Record<string, unknown>;
    if (v.__type === 'Date' && typeof v.iso === 'string') return toDate(v.iso);
    if (typeof v.$date === 'string') return toDate(v.$date);
  }
  return undefined;
}

function localParts(date: Date, timezone: string): LocalParts {
  const offset = OFFSET.exec(timezone);
  if (offset || timezone === 'UTC') {
    const minutes = offset
      ? (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3] ?? 0))
      : 0;
    const d = new Date(date.getTime() + minutes * 60_000);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
    };
  }
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(date);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
  };
}

/** ISO-8601 week-numbering year and week of a calendar date. */
function isoWeek(year: number, month: number, day: number): { year: number; week: number } {
  const d = new Date(Date.UTC(year, month - 1, day));
  const weekday = d.getUTCDay() || 7; // Monday = 1 ... Sunday = 7
  d.setUTCDate(d.getUTCDate() + 4 - weekday); // the Thursday of this week decides the year
  const yearStart = Date.UTC(d.getUTCFullYear(), 0, 1);
  return {
    year: d.getUTCFullYear(),
    week: Math.ceil(((d.getTime() - yearStart) / 86_400_000 + 1) / 7),
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * Formats a bucket start as the key for its interval, in the bucket's time zone:
 * YYYY, YYYY-Qn, YYYY-MM, YYYY-Www (ISO week), YYYY-MM-DD, YYYY-MM-DD HH:00, YYYY-MM-DD HH:MM,
 * YYYY-MM-DD HH:MM:SS. Values that are not dates come back unchanged (null stays null).
 */
export function formatDateKey(value: unknown, interval: DateInterval, timezone = 'UTC'): unknown {
  const date = toDate(value);
  if (!date) return value ?? null;
  const p = localParts(date, timezone);
  const ymd = `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}`;
  switch (interval) {
    case 'year':
      return pad(p.year, 4);
    case 'quarter':
      return `${pad(p.year, 4)}-Q${Math.floor((p.month - 1) / 3) + 1}`;
    case 'month':
      return `${pad(p.year, 4)}-${pad(p.month)}`;
    case 'week': {
      const w = isoWeek(p.year, p.month, p.day);
      return `${pad(w.year, 4)}-W${pad(w.week)}`;
    }
    case 'day':
      return ymd;
    case 'hour':
      return `${ymd} ${pad(p.hour)}:00`;
    case 'minute':
      return `${ymd} ${pad(p.hour)}:${pad(p.minute)}`;
    default:
      return `${ymd} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
  }
}

export interface GroupByDateEnvelope {
  class_name: string;
  field: string;
  interval: DateInterval;
  operation: string;
  timezone: string;
  sort: string;
  groups: { key: unknown; value: unknown; _source?: unknown }[];
  truncated?: true;
}

export function shapeGroupByDateResult(input: {
  className: string;
  field: string;
  interval: DateInterval;
  operation?: string;
  timezone?: string;
  sort?: GroupSort;
  limit?: number;
  rows: readonly GroupRow[];
}): GroupByDateEnvelope {
  const limit = input.limit ?? GROUP_BY_DEFAULT_LIMIT;
  const timezone = input.timezone ?? 'UTC';
  const rows = input.rows.slice(0, limit);
  const envelope: GroupByDateEnvelope = {
    class_name: input.className,
    field: input.field,
    interval: input.interval,
    operation: input.operation ?? 'count',
    timezone,
    sort: input.sort ?? 'key_asc',
    groups: rows.map((r) => ({
      key: formatDateKey(r._id, input.interval, timezone),
      value: r.value ?? null,
      ...sourceOf(r),
    })),
  };
  if (input.rows.length > limit) envelope.truncated = true;
  return envelope;
}
