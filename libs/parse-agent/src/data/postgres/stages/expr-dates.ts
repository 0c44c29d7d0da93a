import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { checkedTimeZone, offsetMinutes } from '../group-by-date-sql';
import type { SqlParams } from '../sql-params';
import type { Exprs as ExprCompiler, OperatorCompiler } from './expr-types';
import type { Ref } from './relation';

/** Date expression operators: parts, formatting, truncation and arithmetic in a time zone. */

const NUMBER = { type: 'Number' } as const;
const DATE = { type: 'Date' } as const;
const STRING = { type: 'String' } as const;

/** The wall-clock time (a timestamp) of the instant `date` in `zone` (checked; default UTC). */
export function localTime(date: string, zone: unknown, params: SqlParams): string {
  const tz = checkedTimeZone(zone);
  const offset = offsetMinutes(tz);
  // PostgreSQL reads '+05:30' as a POSIX zone (sign flipped): a fixed offset is an interval here.
  if (offset !== undefined) {
    return `((${date} AT TIME ZONE 'UTC') + make_interval(mins => ${params.add(offset)}::int))`;
  }
  return `(${date} AT TIME ZONE ${params.add(tz)}::text)`;
}

/** The instant at which the wall-clock time `local` occurs in `zone`. */
export function instantOf(local: string, zone: unknown, params: SqlParams): string {
  const tz = checkedTimeZone(zone);
  const offset = offsetMinutes(tz);
  if (offset !== undefined) {
    return `((${local} - make_interval(mins => ${params.add(offset)}::int)) AT TIME ZONE 'UTC')`;
  }
  return `(${local} AT TIME ZONE ${params.add(tz)}::text)`;
}

/** `'$date'` or `{ date, timezone }`: the date value and its zone. */
function dateArg(c: ExprCompiler, arg: unknown, op: string): { date: string; zone: unknown } {
  if (isPlainObject(arg) && 'date' in arg && !Object.keys(arg).some((k) => k.startsWith('$'))) {
    return { date: c.date(c.compile(arg.date), op), zone: arg.timezone };
  }
  const [d] = c.args(op, arg, 1);
  return { date: c.date(d, op), zone: undefined };
}

const PARTS: Record<string, string> = {
  $year: `EXTRACT(YEAR FROM %)`,
  $month: `EXTRACT(MONTH FROM %)`,
  $dayOfMonth: `EXTRACT(DAY FROM %)`,
  $hour: `EXTRACT(HOUR FROM %)`,
  $minute: `EXTRACT(MINUTE FROM %)`,
  $second: `floor(EXTRACT(SECOND FROM %))`,
  $millisecond: `mod(floor(EXTRACT(MILLISECONDS FROM %))::numeric, 1000)`,
  $dayOfWeek: `(EXTRACT(DOW FROM %) + 1)`,
  $dayOfYear: `EXTRACT(DOY FROM %)`,
  $isoWeek: `EXTRACT(WEEK FROM %)`,
  $isoWeekYear: `EXTRACT(ISOYEAR FROM %)`,
  $isoDayOfWeek: `EXTRACT(ISODOW FROM %)`,
};

function part(c: ExprCompiler, arg: unknown, op: string): Ref {
  const { date, zone } = dateArg(c, arg, op);
  const local = localTime(date, zone, c.params);
  return { expr: `(${PARTS[op].replace('%', local)})::float8`, field: NUMBER };
}

/** MongoDB `$dateToString` format specifiers and their `to_char` patterns. */
const FORMAT: Record<string, string> = {
  Y: 'YYYY',
  m: 'MM',
  d: 'DD',
  H: 'HH24',
  M: 'MI',
  S: 'SS',
  L: 'MS',
  j: 'DDD',
  u: 'ID',
  V: 'IW',
  G: 'IYYY',
};

function toCharPattern(format: string, where: string): string {
  let out = '';
  let literal = '';
  const flush = () => {
    if (literal) out += `"${literal}"`;
    literal = '';
  };
  for (let i = 0; i < format.length; i++) {
    const ch = format[i];
    if (ch === '%') {
      const spec = format[i + 1];
      i += 1;
      if (spec === '%') {
        literal += '%';
        continue;
      }
      const pattern = spec === undefined ? undefined : FORMAT[spec];
      if (!pattern) {
        throw new InvalidQueryError(
          `${where}: $dateToString format '%${spec ?? ''}' is not supported here. ` +
            `Supported: ${Object.keys(FORMAT)
              .map((k) => `%${k}`)
              .join(' ')} %%.`,
        );
      }
      flush();
      out += pattern;
    } else if (ch === '"' || ch === '\\') {
      throw new InvalidQueryError(`${where}: $dateToString format may not contain '${ch}'.`);
    } else {
      literal += ch;
    }
  }
  flush();
  return out;
}

function dateToString(c: ExprCompiler, arg: unknown, op: string): Ref {
  if (!isPlainObject(arg) || !('date' in arg)) {
    throw new InvalidQueryError(`${c.where}: ${op} takes { date, format?, timezone?, onNull? }.`);
  }
  const format = arg.format ?? '%Y-%m-%dT%H:%M:%S.%LZ';
  if (typeof format !== 'string')
    throw new InvalidQueryError(`${c.where}: ${op}.format is a string.`);
  const date = c.date(c.compile(arg.date), op);
  const local = localTime(date, arg.timezone, c.params);
  const text = `to_char(${local}, ${c.params.add(toCharPattern(format, c.where))}::text)`;
  if (arg.onNull === undefined) return { expr: text, field: STRING };
  const fallback = c.text(c.compile(arg.onNull), op);
  return { expr: `COALESCE(${text}, ${fallback})`, field: STRING };
}

const UNITS = [
  'year',
  'quarter',
  'month',
  'week',
  'day',
  'hour',
  'minute',
  'second',
  'millisecond',
];
const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

function unitOf(value: unknown, where: string): string {
  if (typeof value === 'string' && UNITS.includes(value)) return value;
  throw new InvalidQueryError(`${where}: unit must be one of ${UNITS.join(', ')}.`);
}

/** 0 for Sunday ... 6 for Saturday (MongoDB accepts full names and three-letter ones). */
function weekStart(value: unknown, where: string): number {
  if (value === undefined) return 0;
  const i =
    typeof value === 'string'
      ? DAYS.findIndex((d) => d === value.toLowerCase() || d.slice(0, 3) === value.toLowerCase())
      : -1;
  if (i < 0)
    throw new InvalidQueryError(`${where}: startOfWeek must be a day name such as 'monday'.`);
  return i;
}

/** The local start of the `unit` containing `local`; weeks start on `startDay` (0 = Sunday). */
function truncLocal(local: string, unit: string, startDay: number): string {
  if (unit === 'millisecond') return `date_trunc('milliseconds', ${local})`;
  if (unit !== 'week') return `date_trunc('${unit}', ${local})`;
  return `(date_trunc('day', ${local}) - make_interval(days => mod((EXTRACT(DOW FROM ${local})::int - ${startDay} + 7), 7)))`;
}

function dateTrunc(c: ExprCompiler, arg: unknown, op: string): Ref {
  const known = ['date', 'unit', 'timezone', 'startOfWeek', 'binSize'];
  if (!isPlainObject(arg) || Object.keys(arg).some((k) => !known.includes(k))) {
    throw new InvalidQueryError(
      `${c.where}: ${op} takes { date, unit, timezone?, startOfWeek?, binSize? }.`,
    );
  }
  if (arg.binSize !== undefined && arg.binSize !== 1) {
    throw new InvalidQueryError(
      `${c.where}: ${op} binSize other than 1 is not supported on the PostgreSQL path; truncate to the unit and $group, or use group_by_date.`,
    );
  }
  const unit = unitOf(arg.unit, c.where);
  const date = c.date(c.compile(arg.date), op);
  const local = localTime(date, arg.timezone, c.params);
  const start = truncLocal(local, unit, weekStart(arg.startOfWeek, c.where));
  return { expr: instantOf(start, arg.timezone, c.params), field: DATE };
}

function dateAdd(c: ExprCompiler, arg: unknown, op: string): Ref {
  if (!isPlainObject(arg) || !('startDate' in arg) || !('unit' in arg) || !('amount' in arg)) {
    throw new InvalidQueryError(`${c.where}: ${op} takes { startDate, unit, amount, timezone? }.`);
  }
  const unit = unitOf(arg.unit, c.where);
  const date = c.date(c.compile(arg.startDate), op);
  const sign = op === '$dateSubtract' ? '-' : '+';
  const amount = `trunc(${c.number(c.compile(arg.amount), op)})::int`;
  const fixed: Record<string, string> = {
    hour: `make_interval(hours => ${amount})`,
    minute: `make_interval(mins => ${amount})`,
    second: `make_interval(secs => ${amount})`,
    millisecond: `make_interval(secs => ${amount} / 1000.0)`,
  };
  if (fixed[unit]) return { expr: `(${date} ${sign} ${fixed[unit]})`, field: DATE };
  const calendar: Record<string, string> = {
    year: `make_interval(years => ${amount})`,
    quarter: `make_interval(months => 3 * ${amount})`,
    month: `make_interval(months => ${amount})`,
    week: `make_interval(weeks => ${amount})`,
    day: `make_interval(days => ${amount})`,
  };
  // Calendar units move the wall clock in the zone, as MongoDB does.
  const local = localTime(date, arg.timezone, c.params);
  return {
    expr: instantOf(`(${local} ${sign} ${calendar[unit]})`, arg.timezone, c.params),
    field: DATE,
  };
}

function dateDiff(c: ExprCompiler, arg: unknown, op: string): Ref {
  if (!isPlainObject(arg) || !('startDate' in arg) || !('endDate' in arg) || !('unit' in arg)) {
    throw new InvalidQueryError(
      `${c.where}: ${op} takes { startDate, endDate, unit, timezone?, startOfWeek? }.`,
    );
  }
  const unit = unitOf(arg.unit, c.where);
  const start = localTime(c.date(c.compile(arg.startDate), op), arg.timezone, c.params);
  const end = localTime(c.date(c.compile(arg.endDate), op), arg.timezone, c.params);
  const y = (x: string) => `EXTRACT(YEAR FROM ${x})`;
  const m = (x: string) => `EXTRACT(MONTH FROM ${x})`;
  const epoch = (x: string) => `EXTRACT(EPOCH FROM ${x})`;
  let expr: string;
  switch (unit) {
    case 'year':
      expr = `(${y(end)} - ${y(start)})`;
      break;
    case 'quarter':
      expr = `((${y(end)} - ${y(start)}) * 4 + (EXTRACT(QUARTER FROM ${end}) - EXTRACT(QUARTER FROM ${start})))`;
      break;
    case 'month':
      expr = `((${y(end)} - ${y(start)}) * 12 + (${m(end)} - ${m(start)}))`;
      break;
    case 'week': {
      const day = weekStart(arg.startOfWeek, c.where);
      expr = `((${truncLocal(end, 'week', day)}::date - ${truncLocal(start, 'week', day)}::date) / 7)`;
      break;
    }
    case 'day':
      expr = `(${end}::date - ${start}::date)`;
      break;
    case 'millisecond':
      expr = `round((${epoch(end)} - ${epoch(start)}) * 1000)`;
      break;
    default:
      expr = `round((${epoch(truncLocal(end, unit, 0))} - ${epoch(truncLocal(start, unit, 0))}) / ${
        unit === 'hour' ? 3600 : unit === 'minute' ? 60 : 1
      })`;
  }
  return { expr: `(${expr})::float8`, field: NUMBER };
}

function toDate(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  switch (a.field.type) {
    case 'Date':
      return a;
    case 'Number':
      return { expr: `to_timestamp(${a.expr} / 1000.0)`, field: DATE };
    case 'String':
      return {
        expr: `(CASE WHEN ${a.expr} ~ '^\\d{4}-\\d{2}-\\d{2}([T ][0-9:.]+)?(Z|[+-]\\d{2}:?\\d{2})?$' THEN ${a.expr}::timestamptz END)`,
        field: DATE,
      };
    case 'Null':
      return { expr: 'NULL::timestamptz', field: DATE };
    default:
      throw new InvalidQueryError(`${c.where}: ${op} of a ${a.field.type} value is not supported.`);
  }
}

function dateFromParts(c: ExprCompiler, arg: unknown, op: string): Ref {
  const keys = ['year', 'month', 'day', 'hour', 'minute', 'second', 'millisecond', 'timezone'];
  if (!isPlainObject(arg) || !('year' in arg) || Object.keys(arg).some((k) => !keys.includes(k))) {
    throw new InvalidQueryError(
      `${c.where}: ${op} takes { year, month?, day?, hour?, minute?, second?, millisecond?, timezone? }.`,
    );
  }
  const n = (key: string, fallback: number) =>
    arg[key] === undefined ? `${fallback}` : `(${c.number(c.compile(arg[key]), op)})`;
  const local =
    `(make_timestamp(${n('year', 1)}::int, 1, 1, 0, 0, 0) + make_interval(months => ${n('month', 1)}::int - 1, ` +
    `days => ${n('day', 1)}::int - 1, hours => ${n('hour', 0)}::int, mins => ${n('minute', 0)}::int, ` +
    `secs => ${n('second', 0)} + ${n('millisecond', 0)} / 1000.0))`;
  return { expr: instantOf(local, arg.timezone, c.params), field: DATE };
}

export const dateOperators: Record<string, OperatorCompiler> = {
  ...Object.fromEntries(Object.keys(PARTS).map((op) => [op, part])),
  $dateToString: dateToString,
  $dateTrunc: dateTrunc,
  $dateAdd: dateAdd,
  $dateSubtract: dateAdd,
  $dateDiff: dateDiff,
  $toDate: toDate,
  $dateFromParts: dateFromParts,
};
