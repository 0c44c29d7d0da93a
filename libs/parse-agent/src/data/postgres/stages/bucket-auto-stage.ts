import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { assertOutputName, quoteIdent } from '../pg-identifiers';
import type { PgField } from '../pg-schema';
import { ExprCompiler, jsonRank } from './expressions';
import { groupRows } from './group-stages';
import { list, ORD, type Relation, type StageEnv } from './relation';

const NUMBER: PgField = { type: 'Number' };
const KEY_TYPES = ['Number', 'Date', 'String', 'Json'];

/**
 * `$bucketAuto: { groupBy, buckets, output? }` as MongoDB computes it: the rows sorted by
 * groupBy (missing and null first) are cut into `buckets` runs of about round(n / buckets) rows;
 * a run is extended over rows equal to its last value, so equal values never split, and the last
 * bucket takes the rest. `_id: { min, max }`: max is the next bucket's min, the last bucket's is
 * its greatest value. Fewer distinct values give fewer buckets; no rows give none.
 *
 * The cuts are found by a recursive query over the distinct values and their running counts (one
 * step per bucket), then every row is grouped by its bucket's index.
 */
export function bucketAutoStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  if (!isPlainObject(spec) || !('groupBy' in spec) || !('buckets' in spec)) {
    throw new InvalidQueryError(`$bucketAuto takes { groupBy, buckets, output? }.`);
  }
  for (const key of Object.keys(spec)) {
    if (key === 'granularity') {
      throw new InvalidQueryError(
        `$bucketAuto granularity is not supported on the PostgreSQL path: omit it (bucket bounds ` +
          `are then the groupBy values themselves), or use $bucket with boundaries at the rounded ` +
          `numbers you want.`,
      );
    }
    if (!['groupBy', 'buckets', 'output'].includes(key)) {
      throw new InvalidQueryError(
        `$bucketAuto does not take '${key}'; it takes groupBy, buckets, output.`,
      );
    }
  }
  const p = env.params;
  const buckets = `${p.addCount(spec.buckets, '$bucketAuto buckets', { min: 1, max: 10000 })}::int`;
  const output = spec.output === undefined ? { count: { $sum: 1 } } : spec.output;
  if (!isPlainObject(output)) {
    throw new InvalidQueryError(`$bucketAuto output takes { name: { $sum: 1 } }.`);
  }
  const a = p.alias('s');
  const exprs = new ExprCompiler(p, rel, a, '$bucketAuto groupBy', env.vars);
  const ref = exprs.compile(spec.groupBy);
  const type = ref.field.type === 'Null' ? 'String' : ref.field.type;
  if (!KEY_TYPES.includes(type)) {
    throw new InvalidQueryError(
      `$bucketAuto groupBy: numbers, dates, strings or untyped values on the PostgreSQL path; this value is a ${type}.`,
    );
  }
  const keyField: PgField = { type };
  // Untyped (jsonb) values sort as MongoDB orders types (numbers, strings, ...); null is missing.
  const key =
    ref.field.type === 'Null'
      ? 'NULL::text'
      : type === 'Json'
        ? `NULLIF(${ref.expr}, 'null'::jsonb)`
        : ref.expr;
  const c = (col: string) =>
    type === 'String'
      ? `${col} COLLATE "C" ASC NULLS FIRST`
      : type === 'Json'
        ? `${jsonRank(col)}, ${col} ASC NULLS FIRST`
        : `${col} ASC NULLS FIRST`;
  const [src, vals, tot, cuts] = ['src', 'vals', 'tot', 'cuts'].map((n) => p.alias(n));
  const bk = '"__bk"';
  const next = (from: string) =>
    `COALESCE((SELECT min(${vals}.cum) FROM ${vals} WHERE ${vals}.cum >= ${from} + ${tot}.size), ${tot}.n)`;
  const order = [c(`${src}.${bk}`)];
  if (rel.ordered) order.push(`${src}.${ORD}`);
  const sql =
    `WITH RECURSIVE ${src} AS (SELECT ${list(rel.fields, a, rel.ordered ? [`${a}.${ORD}`] : [])}, ` +
    `${key} AS ${bk} FROM (${rel.sql}) AS ${a}), ` +
    `${vals} AS (SELECT ${bk}, sum(count(*)) OVER (ORDER BY ${c(bk)}) AS cum ` +
    `FROM ${src} GROUP BY ${bk}), ` +
    `${tot} AS (SELECT count(*)::numeric AS n, greatest(1, round(count(*)::numeric / ${buckets})) AS size FROM ${src}), ` +
    `${cuts} AS (SELECT 0 AS b, 0::numeric AS lo, ` +
    `CASE WHEN ${buckets} = 1 THEN ${tot}.n ELSE ${next('0')} END AS hi FROM ${tot} WHERE ${tot}.n > 0 ` +
    `UNION ALL SELECT ${cuts}.b + 1, ${cuts}.hi, ` +
    `CASE WHEN ${cuts}.b + 2 >= ${buckets} THEN ${tot}.n ELSE ${next(`${cuts}.hi`)} END ` +
    `FROM ${cuts}, ${tot} WHERE ${cuts}.hi < ${tot}.n) ` +
    `SELECT ${list(rel.fields, src)}, ${src}.${bk}, ${cuts}.b::float8 AS "__bucket", ` +
    `row_number() OVER (ORDER BY ${order.join(', ')}) AS ${ORD} FROM ${src} ` +
    `JOIN ${vals} ON ${vals}.${bk} IS NOT DISTINCT FROM ${src}.${bk} ` +
    `JOIN ${cuts} ON ${vals}.cum > ${cuts}.lo AND ${vals}.cum <= ${cuts}.hi`;
  const keyed: Relation = {
    sql,
    fields: { ...rel.fields, __bk: keyField, __bucket: NUMBER },
    ordered: true,
    listable: rel.listable,
  };
  // Output names may not start with '__', so the two hidden ones cannot clash.
  for (const name of Object.keys(output)) assertOutputName(name, '$bucketAuto output');
  const grouped = groupRows(
    env,
    { _id: '$__bucket', ...output, __bmin: { $first: '$__bk' }, __bmax: { $last: '$__bk' } },
    keyed,
    ['__bmin', '__bmax'],
  );
  const g = p.alias('s');
  const jsonb = (expr: string) => exprs.jsonb({ expr, field: keyField });
  const max = `COALESCE(lead(${g}."__bmin") OVER (ORDER BY ${g}."_id"), ${g}."__bmax")`;
  const names = Object.keys(output);
  const fields: Record<string, PgField> = { _id: { type: 'Object', keys: ['min', 'max'] } };
  for (const n of names) fields[n] = grouped.fields[n];
  const cols = [
    `jsonb_build_object('min', ${jsonb(`${g}."__bmin"`)}, 'max', ${jsonb(max)}) AS "_id"`,
    ...names.map((n) => `${g}.${quoteIdent(n)}`),
    `row_number() OVER (ORDER BY ${g}."_id") AS ${ORD}`,
  ];
  return {
    sql: `SELECT ${cols.join(', ')} FROM (${grouped.sql}) AS ${g}`,
    fields,
    ordered: true,
    listable: true,
  };
}
