import { AgentValidationError } from '../../core/errors';
import { columnRef } from './pg-identifiers';
import { SqlParams, type SqlQuery } from './sql-params';
import { accumulatorSql, type GroupValue } from './group-by-sql';
import { scopedSource, visibleField, type SqlContext } from './scoped-source';
import { compileWhere, type Where } from './where-to-sql';

export type DateInterval = 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
/** `date_trunc` units: fixed SQL literals chosen from this table, never the agent's text. */
const UNITS: Record<DateInterval, string> = {
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
 * `group_by_date`: rows `{ bucket, value }`, oldest first. `bucket` is the local start of the
 * period in `timeZone` as `YYYY-MM-DDTHH:MM:SS` (weeks start on Monday, ISO-8601).
 */
export function groupByDateSql(input: GroupByDateInput, ctx: SqlContext): SqlQuery {
  const unit = Object.prototype.hasOwnProperty.call(UNITS, input.interval)
    ? UNITS[input.interval]
    : undefined;
  if (!unit) {
    throw new AgentValidationError(
      `Unknown interval '${String(input.interval)}'. Use one of: ${Object.keys(UNITS).join(', ')}.`,
    );
  }
  const timeZone = input.timeZone ?? 'UTC';
  if (typeof timeZone !== 'string' || !isKnownTimeZone(timeZone)) {
    throw new AgentValidationError(
      `Unknown time zone ${JSON.stringify(timeZone)}. Use an IANA name such as 'Europe/Lisbon'.`,
    );
  }
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
  const bucket = `date_trunc(${unit}, ${col} AT TIME ZONE ${params.add(timeZone)}::text)`;
  const limit = params.addCount(input.limit ?? 1000, 'limit', { min: 1 });
  return params.query(
    `SELECT to_char(${bucket}, 'YYYY-MM-DD"T"HH24:MI:SS') AS "bucket", ${value} AS "value" ` +
      `FROM (${source.sql}) AS ${t} WHERE ${cond} AND ${col} IS NOT NULL ` +
      `GROUP BY 1 ORDER BY 1 LIMIT ${limit}`,
  );
}
