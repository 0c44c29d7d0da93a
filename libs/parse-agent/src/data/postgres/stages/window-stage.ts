import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { assertOutputName, columnRef, quoteIdent } from '../pg-identifiers';
import type { PgField } from '../pg-schema';
import { orderTerm, sortTerms } from './basic-stages';
import { ExprCompiler } from './expressions';
import { keepOrd, ORD, type Ref, type Relation, type StageEnv } from './relation';

const WINDOW_OPS = [
  '$sum',
  '$avg',
  '$min',
  '$max',
  '$count',
  '$first',
  '$last',
  '$push',
  '$stdDevPop',
  '$stdDevSamp',
  '$rank',
  '$denseRank',
  '$documentNumber',
  '$shift',
];
const RANKS: Record<string, string> = {
  $rank: 'rank()',
  $denseRank: 'dense_rank()',
  $documentNumber: 'row_number()',
};

/** `documents: [lower, upper]` as a ROWS frame; no window means the whole partition. */
function frame(env: StageEnv, window: unknown, where: string): string {
  if (window === undefined) return 'ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING';
  const docs =
    isPlainObject(window) && Object.keys(window).length === 1 ? window.documents : undefined;
  if (!Array.isArray(docs) || docs.length !== 2) {
    throw new InvalidQueryError(
      `${where}: only 'documents' windows are supported on the PostgreSQL path ` +
        `(e.g. { "documents": ["unbounded", "current"] }); range windows: $group by the period instead.`,
    );
  }
  const bound = (b: unknown, lower: boolean) => {
    if (b === 'unbounded') return lower ? 'UNBOUNDED PRECEDING' : 'UNBOUNDED FOLLOWING';
    if (b === 'current' || b === 0) return 'CURRENT ROW';
    if (typeof b === 'number' && Number.isInteger(b)) {
      return `${env.params.addCount(Math.abs(b), `${where} window`)} ${b < 0 ? 'PRECEDING' : 'FOLLOWING'}`;
    }
    throw new InvalidQueryError(`${where}: window bounds are 'unbounded', 'current' or integers.`);
  };
  return `ROWS BETWEEN ${bound(docs[0], true)} AND ${bound(docs[1], false)}`;
}

/**
 * `$setWindowFields: { partitionBy?, sortBy?, output: { name: { $op: arg, window? } } }` as SQL
 * window functions over the partition, in sortBy order.
 */
export function windowStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  if (!isPlainObject(spec) || !isPlainObject(spec.output) || !Object.keys(spec.output).length) {
    throw new InvalidQueryError(
      `$setWindowFields takes { partitionBy?, sortBy?, output: { name: { "$sum": "$field", "window": { "documents": ["unbounded", "current"] } } } }.`,
    );
  }
  const a = env.params.alias('s');
  const exprs = new ExprCompiler(env.params, rel, a, '$setWindowFields', env.vars);
  const part = spec.partitionBy === undefined ? undefined : partitionKey(exprs, spec.partitionBy);
  // Partitioned with the collation the output order uses, so one sort serves both.
  const partition = part
    ? `PARTITION BY ${['String', 'Pointer', 'File'].includes(part.field.type) ? `${part.expr} COLLATE "C"` : part.expr}`
    : '';
  const order =
    spec.sortBy === undefined ? [] : sortTerms(env, spec.sortBy, rel, a, '$setWindowFields sortBy');
  const orderBy = order.length ? ` ORDER BY ${order.join(', ')}` : '';
  const fields: Record<string, PgField> = { ...rel.fields };
  const computed: Record<string, string> = {};
  for (const [name, out] of Object.entries(spec.output)) {
    const where = `$setWindowFields '${name}'`;
    assertOutputName(name, '$setWindowFields output');
    const ops = isPlainObject(out) ? Object.keys(out).filter((k) => k !== 'window') : [];
    if (ops.length !== 1 || !WINDOW_OPS.includes(ops[0])) {
      throw new InvalidQueryError(`${where}: use one of ${WINDOW_OPS.join(', ')}.`);
    }
    const op = ops[0];
    const arg = (out as Record<string, unknown>)[op];
    const win = (out as Record<string, unknown>).window;
    let sql: string;
    let field: PgField;
    if (RANKS[op] || op === '$shift') {
      if (!order.length) throw new InvalidQueryError(`${where}: ${op} needs sortBy.`);
      if (win !== undefined) throw new InvalidQueryError(`${where}: ${op} takes no window.`);
    }
    if (RANKS[op]) {
      // Left bigint (not cast to float8 as other Numbers are): a later `$match: { rank: 1 }` then
      // compares the window function itself, which PostgreSQL turns into a run condition.
      sql = `${RANKS[op]} OVER (${partition}${orderBy})`;
      field = { type: 'Number', bigint: true };
    } else if (op === '$shift') {
      if (
        !isPlainObject(arg) ||
        !('output' in arg) ||
        typeof arg.by !== 'number' ||
        !Number.isInteger(arg.by)
      ) {
        throw new InvalidQueryError(`${where}: $shift takes { output, by: <integer>, default? }.`);
      }
      const value = exprs.compile(arg.output);
      const fallback = exprs.compile(arg.default ?? null);
      const fn = arg.by >= 0 ? 'lead' : 'lag';
      const by = env.params.addCount(Math.abs(arg.by), `${where} by`);
      const same = value.field.type === fallback.field.type || fallback.field.type === 'Null';
      const v = same ? value.expr : exprs.jsonb(value);
      const d = same
        ? fallback.field.type === 'Null'
          ? 'NULL'
          : fallback.expr
        : exprs.jsonb(fallback);
      field = same ? value.field : { type: 'Json' };
      sql = `${fn}(${v}, ${by}::int, ${d}) OVER (${partition}${orderBy})`;
    } else {
      const over = `OVER (${partition}${orderBy} ${frame(env, win, where)})`;
      ({ sql, field } = windowFold(exprs, op, arg, over, where));
    }
    computed[name] = sql;
    fields[name] = field;
  }
  const cols = Object.keys(fields).map((n) =>
    Object.prototype.hasOwnProperty.call(computed, n)
      ? `${computed[n]} AS ${quoteIdent(n)}`
      : columnRef(n, a),
  );
  // The rows come out sorted by partition, then sortBy, as MongoDB sorts them for the stage.
  // Numbered only when a later stage (or the answer) can see the order: the numbering is a
  // second window over the rows.
  const sorted = [...(part ? [orderTerm(part, 1, env.params)] : []), ...order];
  if (rel.ordered) sorted.push(`${a}.${ORD}`);
  const ord = env.orderUnused
    ? []
    : sorted.length
      ? [`row_number() OVER (ORDER BY ${sorted.join(', ')}) AS ${ORD}`]
      : keepOrd(rel, a);
  return {
    sql: `SELECT ${[...cols, ...ord].join(', ')} FROM (${rel.sql}) AS ${a}`,
    fields,
    ordered: !env.orderUnused && (rel.ordered || sorted.length > 0),
    listable: rel.listable,
  };
}

function partitionKey(exprs: ExprCompiler, spec: unknown): Ref {
  const ref = exprs.compile(spec);
  if (['Json', 'Array', 'Object'].includes(ref.field.type))
    return { expr: `NULLIF(${ref.expr}, 'null'::jsonb)`, field: { type: 'Json' } };
  return ref;
}

function windowFold(
  exprs: ExprCompiler,
  op: string,
  arg: unknown,
  over: string,
  where: string,
): { sql: string; field: PgField } {
  if (op === '$count') {
    if (!(isPlainObject(arg) && Object.keys(arg).length === 0))
      throw new InvalidQueryError(`${where}: $count takes {}.`);
    return { sql: `count(*) ${over}::float8`, field: { type: 'Number' } };
  }
  if (op === '$sum' && typeof arg === 'number') {
    return { sql: `(count(*) ${over} * ${exprs.literal(arg).expr})`, field: { type: 'Number' } };
  }
  const ref = exprs.compile(arg);
  const numeric = () => exprs.number(ref, op);
  switch (op) {
    case '$sum':
      return { sql: `COALESCE(sum(${numeric()}) ${over}, 0)::float8`, field: { type: 'Number' } };
    case '$avg':
      return { sql: `(avg(${numeric()}) ${over})::float8`, field: { type: 'Number' } };
    case '$stdDevPop':
      return { sql: `(stddev_pop(${numeric()}) ${over})::float8`, field: { type: 'Number' } };
    case '$stdDevSamp':
      return { sql: `(stddev_samp(${numeric()}) ${over})::float8`, field: { type: 'Number' } };
    case '$min':
    case '$max': {
      const fn = op === '$min' ? 'min' : 'max';
      if (ref.field.type === 'Number' || ref.field.type === 'Date')
        return { sql: `${fn}(${ref.expr}) ${over}`, field: ref.field };
      if (ref.field.type === 'String')
        return { sql: `${fn}(${ref.expr} COLLATE "C") ${over}`, field: ref.field };
      return { sql: `${fn}(${numeric()}) ${over}`, field: { type: 'Number' } };
    }
    case '$first':
      return { sql: `first_value(${ref.expr}) ${over}`, field: ref.field };
    case '$last':
      return { sql: `last_value(${ref.expr}) ${over}`, field: ref.field };
    default: {
      const value = exprs.jsonb(ref);
      return {
        sql: `COALESCE(jsonb_agg(${value}) FILTER (WHERE ${value} IS NOT NULL) ${over}, '[]'::jsonb)`,
        field: { type: 'Array' },
      };
    }
  }
}
