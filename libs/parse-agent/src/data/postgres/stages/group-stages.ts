import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { assertOutputName, quoteIdent } from '../pg-identifiers';
import type { PgField } from '../pg-schema';
import { ExprCompiler, jsonRank } from './expressions';
import { asColumn, ORD, type Ref, type Relation, type StageEnv } from './relation';

/** `$group` (and its accumulators), `$sortByCount`, `$bucket`. */

export const SUPPORTED_ACCUMULATORS = [
  '$sum',
  '$avg',
  '$min',
  '$max',
  '$count',
  '$first',
  '$last',
  '$push',
  '$addToSet',
  '$stdDevPop',
  '$stdDevSamp',
] as const;

const NUMBER: PgField = { type: 'Number' };
const ARRAY: PgField = { type: 'Array' };

/** One accumulated output: its aggregate SQL over the inner columns of alias `g`. */
interface Output {
  name: string;
  sql: string;
  field: PgField;
}

/**
 * The accumulators of `spec` (every key but `skip`): per-row values become inner columns
 * (`__v0`...), folded over alias `g` in the outer select. `ord` is the inner order column, if any.
 */
function accumulators(
  exprs: ExprCompiler,
  spec: Record<string, unknown>,
  inner: string[],
  g: string,
  ord: string | undefined,
  where: string,
  hidden: readonly string[] = [],
): Output[] {
  const outputs: Output[] = [];
  for (const [name, accSpec] of Object.entries(spec)) {
    if (!hidden.includes(name)) assertOutputName(name, where);
    const acc = isPlainObject(accSpec) ? Object.keys(accSpec) : [];
    if (acc.length !== 1 || !(SUPPORTED_ACCUMULATORS as readonly string[]).includes(acc[0])) {
      throw new InvalidQueryError(
        `${where} '${name}': use one accumulator of ${SUPPORTED_ACCUMULATORS.join(', ')} ` +
          `($top/$bottom/$firstN...: $sort first, then $first/$last or $push and $slice).`,
      );
    }
    const op = acc[0];
    const arg = (accSpec as Record<string, unknown>)[op];
    if (op === '$count' || (op === '$sum' && typeof arg === 'number')) {
      if (op === '$count' && !(isPlainObject(arg) && Object.keys(arg).length === 0)) {
        throw new InvalidQueryError(`${where} '${name}': $count takes {}.`);
      }
      const times = op === '$sum' && arg !== 1 ? ` * ${exprs.literal(arg).expr}` : '';
      outputs.push({ name, sql: `(count(*)::float8${times})`, field: NUMBER });
      continue;
    }
    const ref = exprs.compile(arg);
    const col = `${g}."__v${inner.length}"`;
    const value = perRowValue(exprs, op, ref);
    inner.push(`${value.expr} AS "__v${inner.length}"`);
    outputs.push({ name, ...fold(op, col, value.field, ord ? `${g}.${ord}` : undefined) });
  }
  return outputs;
}

/** What an accumulator folds for one row: numbers for the numeric ones, else the value itself. */
function perRowValue(exprs: ExprCompiler, op: string, ref: Ref): Ref {
  if (['$sum', '$avg', '$stdDevPop', '$stdDevSamp'].includes(op)) {
    const { type } = ref.field;
    if (type === 'Number' || type === 'Json' || type === 'Null') {
      return { expr: exprs.number(ref, op), field: NUMBER };
    }
    throw new InvalidQueryError(
      `${op} adds numbers; this value is a ${type} (MongoDB would count it as nothing). ` +
        `Use { "$sum": 1 } to count rows.`,
    );
  }
  if (op === '$push' || op === '$addToSet') return { expr: exprs.jsonb(ref), field: ref.field };
  if (ref.field.type === 'Array' || ref.field.type === 'Object')
    return { expr: ref.expr, field: { type: 'Json' } };
  return ref;
}

function fold(
  op: string,
  col: string,
  field: PgField,
  ord: string | undefined,
): Omit<Output, 'name'> {
  const orderBy = ord ? ` ORDER BY ${ord}` : '';
  switch (op) {
    case '$sum':
      return { sql: `COALESCE(sum(${col}), 0)::float8`, field: NUMBER };
    case '$avg':
      return { sql: `avg(${col})::float8`, field: NUMBER };
    case '$stdDevPop':
      return { sql: `stddev_pop(${col})::float8`, field: NUMBER };
    case '$stdDevSamp':
      return { sql: `stddev_samp(${col})::float8`, field: NUMBER };
    case '$first':
    case '$last': {
      const dir = op === '$last' ? ' DESC' : '';
      const order = ord ? ` ORDER BY ${ord}${dir}` : '';
      return { sql: `(array_agg(${col}${order}))[1]`, field };
    }
    case '$push':
      return {
        sql: `COALESCE(jsonb_agg(${col}${orderBy}) FILTER (WHERE ${col} IS NOT NULL), '[]'::jsonb)`,
        field: ARRAY,
      };
    case '$addToSet':
      return {
        sql: `COALESCE(jsonb_agg(DISTINCT ${col}) FILTER (WHERE ${col} IS NOT NULL), '[]'::jsonb)`,
        field: ARRAY,
      };
    default:
      return { sql: minMax(op, col, field), field };
  }
}

/** `$min`/`$max` ignoring missing values; strings by code point, jsonb in BSON type order. */
function minMax(op: string, col: string, field: PgField): string {
  const fn = op === '$min' ? 'min' : 'max';
  switch (field.type) {
    case 'Number':
    case 'Date':
      return `${fn}(${col})`;
    case 'String':
    case 'Pointer':
    case 'File':
      return `${fn}(${col} COLLATE "C")`;
    case 'Boolean':
      return `${op === '$min' ? 'bool_and' : 'bool_or'}(${col})`;
    case 'Null':
      return 'NULL';
    default: {
      const dir = op === '$min' ? 'ASC' : 'DESC';
      return (
        `(array_agg(${col} ORDER BY ${jsonRank(col)} ${dir}, ${col} ${dir}) ` +
        `FILTER (WHERE ${col} IS NOT NULL AND ${col} <> 'null'::jsonb))[1]`
      );
    }
  }
}

/** A group key as a column: jsonb null and SQL NULL are one group, as null and missing are. */
function keyExpr(ref: Ref): string {
  const t = ref.field.type;
  if (t === 'Json' || t === 'Array' || t === 'Object') return `NULLIF(${ref.expr}, 'null'::jsonb)`;
  return ref.expr;
}

export function groupStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  return groupRows(env, spec, rel, []);
}

/** `$group` with `hidden` outputs: internal names (`__x`) a stage built on it adds for itself. */
export function groupRows(
  env: StageEnv,
  spec: unknown,
  rel: Relation,
  hidden: readonly string[],
): Relation {
  if (!isPlainObject(spec) || !('_id' in spec)) {
    throw new InvalidQueryError(
      '$group needs an _id (null, an expression or an object of expressions), e.g. { "_id": "$status", "n": { "$sum": 1 } }.',
    );
  }
  const a = env.params.alias('s');
  const g = env.params.alias('g');
  const exprs = new ExprCompiler(env.params, rel, a, '$group _id', env.vars);
  const inner: string[] = [];
  const keyCols: string[] = [];
  let idSql: string;
  let idField: PgField;
  const id = spec._id;
  const isDoc =
    isPlainObject(id) &&
    Object.keys(id).length > 0 &&
    !Object.keys(id).some((k) => k.startsWith('$'));
  if (isDoc) {
    const parts: string[] = [];
    for (const [name, value] of Object.entries(id)) {
      assertOutputName(name, '$group _id');
      const ref = exprs.compile(value);
      const k = `"__k${keyCols.length}"`;
      inner.push(`${keyExpr(ref)} AS ${k}`);
      keyCols.push(`${g}.${k}`);
      parts.push(
        `${env.params.add(name)}::text, ${exprs.jsonb({ expr: `${g}.${k}`, field: ref.field })}`,
      );
    }
    idSql = `jsonb_strip_nulls(jsonb_build_object(${parts.join(', ')}))`;
    idField = { type: 'Object', keys: Object.keys(id) };
  } else {
    const ref = exprs.compile(id);
    idField = asColumn(ref).field;
    if (ref.field.type === 'Null') idSql = 'NULL::text';
    else {
      inner.push(`${keyExpr(ref)} AS "__k0"`);
      keyCols.push(`${g}."__k0"`);
      idSql = `${g}."__k0"`;
    }
  }
  if (rel.ordered) inner.push(`${a}.${ORD} AS ${ORD}`);
  const { _id: _key, ...rest } = spec;
  const values = new ExprCompiler(env.params, rel, a, '$group', env.vars);
  const valueCols: string[] = [];
  const ord = rel.ordered ? ORD : undefined;
  const outputs = accumulators(values, rest, valueCols, g, ord, '$group', hidden);
  const fields: Record<string, PgField> = { _id: idField };
  const cols = [`${idSql} AS "_id"`];
  for (const out of outputs) {
    fields[out.name] = out.field;
    cols.push(`${out.sql} AS ${quoteIdent(out.name)}`);
  }
  const all = [...inner, ...valueCols];
  const innerSql = `SELECT ${all.length ? all.join(', ') : 'NULL AS "__none"'} FROM (${rel.sql}) AS ${a}`;
  // Without keys SQL still returns one row for empty input; MongoDB returns none.
  const tail = keyCols.length ? ` GROUP BY ${keyCols.join(', ')}` : ' HAVING count(*) > 0';
  return {
    sql: `SELECT ${cols.join(', ')} FROM (${innerSql}) AS ${g}${tail}`,
    fields,
    ordered: false,
    listable: true,
  };
}

/** `$sortByCount: <expr>`: groups by the value, largest count first (ties by _id ascending). */
export function sortByCountStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  if (isPlainObject(spec) && !Object.keys(spec).some((k) => k.startsWith('$'))) {
    throw new InvalidQueryError(`$sortByCount takes an expression such as "$status".`);
  }
  const grouped = groupStage(env, { _id: spec, count: { $sum: 1 } }, rel);
  const a = env.params.alias('s');
  const idOrder = grouped.fields._id.type === 'String' ? `${a}."_id" COLLATE "C"` : `${a}."_id"`;
  return {
    sql:
      `SELECT ${a}."_id", ${a}."count", row_number() OVER (ORDER BY ${a}."count" DESC, ${idOrder} ASC NULLS FIRST) AS ${ORD} ` +
      `FROM (${grouped.sql}) AS ${a}`,
    fields: grouped.fields,
    ordered: true,
    listable: true,
  };
}

/** `$bucket: { groupBy, boundaries, default, output }`, buckets in boundary order. */
export function bucketStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  if (!isPlainObject(spec) || !('groupBy' in spec) || !Array.isArray(spec.boundaries)) {
    throw new InvalidQueryError(`$bucket takes { groupBy, boundaries: [...], default, output? }.`);
  }
  const bounds = spec.boundaries;
  const numeric = bounds.every((b) => typeof b === 'number' && Number.isFinite(b));
  const strings = bounds.every((b) => typeof b === 'string');
  if (bounds.length < 2 || (!numeric && !strings)) {
    throw new InvalidQueryError(
      `$bucket boundaries: at least two numbers (or two strings) on the PostgreSQL path.`,
    );
  }
  for (let i = 1; i < bounds.length; i++) {
    if (!((bounds[i] as number | string) > (bounds[i - 1] as number | string))) {
      throw new InvalidQueryError(`$bucket boundaries must be sorted ascending without repeats.`);
    }
  }
  if (!('default' in spec)) {
    throw new InvalidQueryError(
      `$bucket needs "default" on the PostgreSQL path (MongoDB fails the whole query when a value ` +
        `falls outside the boundaries); add e.g. "default": "other".`,
    );
  }
  const fallbackValue = spec.default as number | string;
  if (
    typeof fallbackValue === typeof bounds[0] &&
    fallbackValue >= (bounds[0] as number | string) &&
    fallbackValue < (bounds[bounds.length - 1] as number | string)
  ) {
    throw new InvalidQueryError(
      `$bucket default must lie outside the boundaries (below the first or from the last on), as on MongoDB.`,
    );
  }
  const a = env.params.alias('s');
  const exprs = new ExprCompiler(env.params, rel, a, '$bucket groupBy', env.vars);
  const ref = exprs.compile(spec.groupBy);
  const x = numeric ? exprs.number(ref, '$bucket') : `${exprs.text(ref, '$bucket')} COLLATE "C"`;
  const bound = (v: unknown) => exprs.literal(v);
  // Rows are grouped by the bucket's index (an integer is the cheapest key); the key it stands
  // for is put back after grouping.
  const ranks: string[] = [];
  const keys: string[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    keys.push(`WHEN ${i} THEN ${exprs.jsonb(bound(bounds[i]))}`);
    if (numeric) continue;
    // Every bound parameter must appear in the text: only the CASE form binds the bounds one by one.
    if (i === 0) ranks.push(`WHEN ${x} < ${bound(bounds[0]).expr} THEN ${bounds.length}`);
    ranks.push(`WHEN ${x} < ${bound(bounds[i + 1]).expr} THEN ${i}`);
  }
  const fallback = exprs.jsonb(exprs.literal(spec.default));
  // Missing values, and values outside the boundaries, go to the default bucket. Numbers find
  // their bucket by binary search (width_bucket), as a hand-written query would.
  const n = bounds.length;
  const rank = numeric
    ? `(CASE WHEN width_bucket(${x}, ${env.params.add(bounds)}::float8[]) BETWEEN 1 AND ${n - 1} ` +
      `THEN width_bucket(${x}, ${env.params.add(bounds)}::float8[]) - 1 ELSE ${n} END)::float8`
    : `(CASE WHEN ${x} IS NULL THEN ${n} ${ranks.join(' ')} ELSE ${n} END)::float8`;
  const output = spec.output === undefined ? { count: { $sum: 1 } } : spec.output;
  if (!isPlainObject(output))
    throw new InvalidQueryError(`$bucket output takes { name: { $sum: 1 } }.`);
  const keyed: Relation = {
    sql: `SELECT ${a}.*, ${rank} AS "__bucket" FROM (${rel.sql}) AS ${a}`,
    fields: { ...rel.fields, __bucket: NUMBER },
    ordered: rel.ordered,
    listable: rel.listable,
  };
  const grouped = groupStage(env, { _id: '$__bucket', ...output }, keyed);
  return reorderBuckets(env, grouped, `(CASE %s ${keys.join(' ')} ELSE ${fallback} END)`);
}

/** `_id: index` from the grouped buckets back to `_id: key`, in index order. */
function reorderBuckets(env: StageEnv, grouped: Relation, keyOf: string): Relation {
  const a = env.params.alias('s');
  const names = Object.keys(grouped.fields).filter((n) => n !== '_id');
  const fields: Record<string, PgField> = { _id: { type: 'Json' } };
  for (const n of names) fields[n] = grouped.fields[n];
  const cols = [
    `${keyOf.replace('%s', `${a}."_id"::int`)} AS "_id"`,
    ...names.map((n) => `${a}.${quoteIdent(n)}`),
  ];
  return {
    sql:
      `SELECT ${cols.join(', ')}, row_number() OVER (ORDER BY ${a}."_id") AS ${ORD} ` +
      `FROM (${grouped.sql}) AS ${a}`,
    fields,
    ordered: true,
    listable: true,
  };
}
