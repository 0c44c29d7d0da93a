import { AgentValidationError } from '../../core/errors';
import { columnRef } from './pg-identifiers';
import { SqlParams, type SqlQuery } from './sql-params';
import { accumulatorSql, groupOrderSql, type GroupOrder, type GroupValue } from './group-by-sql';
import { scopedSource, visibleField, type SqlContext } from './scoped-source';
import { compileWhere, type Where } from './where-to-sql';

export type DateInterval =
  'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
/** `date_trunc` units: fixed SQL literals chosen from this table, never the agent's text. */
const UNITS: Record<DateInterval, string> = {
  second: `'second'`,
  minute: `'minute'`,
  hour: `'hour'`,
  day: `'day'`,
  week: `'week'`,
  month: `'month'`,
  quarter: `'quarter'`,
  year: `'year'`,
};

export interface GroupByDateInput extends GroupValue {
  className: string;
  /** A Date field; default `createdAt`. */
  field?: string;
  interval: DateInterval;
  /** IANA time zone the buckets are cut in; default `UTC`. */
  timeZone?: string;
  where?: Where;
  /** Default 1000 buckets. */
  limit?: number;
  /** Default key_asc (oldest first). */
  sort?: GroupOrder;
}

const OFFSET = /^([+-])(\d{2}):?(\d{2})?$/;

/** Minutes east of UTC for a fixed offset such as `+05:30`, or undefined for a zone name. */
export function offsetMinutes(timeZone: string): number | undefined {
  const m = OFFSET.exec(timeZone);
  if (!m || Number(m[2]) > 14 || Number(m[3] ?? 0) > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

/** True for a time zone name this runtime knows (IANA names and `UTC`). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * `group_by_date`: rows `{ bucket, at, value }`, oldest first. `bucket` is the local start of the
 * period in `timeZone` as `YYYY-MM-DDTHH:MM:SS` (weeks start on Monday, ISO-8601); `at` is the
 * instant that period starts (a timestamptz).
 */
/** The SQL literal of a `date_trunc` unit, or the refusal naming the units there are. */
function unitSql(interval: unknown): string {
  if (typeof interval === 'string' && Object.prototype.hasOwnProperty.call(UNITS, interval)) {
    return UNITS[interval as DateInterval];
  }
  throw new AgentValidationError(
    `Unknown interval '${String(interval)}'. Use one of: ${Object.keys(UNITS).join(', ')}.`,
  );
}

/** A time zone name or fixed offset, checked; undefined stands for UTC. */
export function checkedTimeZone(timeZone: unknown): string {
  const zone = timeZone ?? 'UTC';
  const offset = typeof zone === 'string' ? offsetMinutes(zone) : undefined;
  if (typeof zone !== 'string' || (offset === undefined && !isKnownTimeZone(zone))) {
    throw new AgentValidationError(
      `Unknown time zone ${JSON.stringify(zone)}. Use an IANA name such as 'Europe/Lisbon' or an offset such as '+05:30'.`,
    );
  }
  return zone;
}

/**
 * The period of `interval` containing the timestamptz `col`, cut in `timeZone`: `local` is the
 * period's local start (a timestamp), `instant` the moment it starts (a timestamptz). Weeks start
 * on Monday (ISO-8601), as MongoDB's `$dateTrunc` with `startOfWeek: 'monday'`.
 */
export function dateBucketSql(
  col: string,
  interval: unknown,
  timeZone: unknown,
  params: SqlParams,
): { local: string; instant: string } {
  const unit = unitSql(interval);
  const zone = checkedTimeZone(timeZone);
  const offset = offsetMinutes(zone);
  // Local wall-clock time in the zone, truncated, then back to the instant the bucket starts at.
  // A fixed offset is applied as an interval: PostgreSQL reads '+05:30' as a POSIX zone (sign flipped).
  if (offset !== undefined) {
    const shift = `make_interval(mins => ${params.add(offset)}::int)`;
    const local = `date_trunc(${unit}, (${col} AT TIME ZONE 'UTC') + ${shift})`;
    return { local, instant: `((${local} - ${shift}) AT TIME ZONE 'UTC')` };
  }
  const sqlZone = `${params.add(zone)}::text`;
  const local = `date_trunc(${unit}, ${col} AT TIME ZONE ${sqlZone})`;
  return { local, instant: `(${local} AT TIME ZONE ${sqlZone})` };
}

export function groupByDateSql(input: GroupByDateInput, ctx: SqlContext): SqlQuery {
  unitSql(input.interval);
  checkedTimeZone(input.timeZone);
  const params = new SqlParams();
  const source = scopedSource(input.className, ctx, params);
  const t = params.alias();
  const fieldName = input.field ?? 'createdAt';
  const field = visibleField(source, fieldName, 'date field');
  if (field.type !== 'Date') {
    throw new AgentValidationError(
      `group_by_date needs a Date field; '${fieldName}' is ${field.type}.`,
    );
  }
  const value = accumulatorSql(input, source, t);
  const cond = compileWhere(input.where ?? {}, source, params, t);
  const col = columnRef(fieldName, t);
  const { local: bucket, instant } = dateBucketSql(col, input.interval, input.timeZone, params);
  const limit = params.addCount(input.limit ?? 1000, 'limit', { min: 1 });
  const order = groupOrderSql(input.sort, 'key_asc').replace(/"key"/g, '"local"');
  return params.query(
    `SELECT to_char("local", 'YYYY-MM-DD"T"HH24:MI:SS') AS "bucket", "at", "value" FROM (` +
      `SELECT ${bucket} AS "local", min(${instant}) AS "at", ${value} AS "value" ` +
      `FROM (${source.sql}) AS ${t} WHERE ${cond} AND ${col} IS NOT NULL ` +
      `GROUP BY 1) AS b ORDER BY ${order} LIMIT ${limit}`,
  );
}
