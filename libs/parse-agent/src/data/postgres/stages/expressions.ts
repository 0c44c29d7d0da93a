import { AgentValidationError, InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { columnRef } from '../pg-identifiers';
import type { PgField } from '../pg-schema';
import type { SqlParams } from '../sql-params';
import { arithmeticOperators, arrayOperators, stringOperators } from './expr-operators';
import { dateOperators } from './expr-dates';
import type { Exprs, OperatorCompiler } from './expr-types';
import { known, type Ref, type Relation } from './relation';

/**
 * Compiles MongoDB aggregation expressions to SQL over the columns of one relation. Every value
 * becomes a bind parameter; every field must be a column of the relation (what the reader may see
 * at this stage). Operators outside the tables below are refused with the list of supported ones.
 */

const TYPES = {
  number: { type: 'Number' },
  string: { type: 'String' },
  boolean: { type: 'Boolean' },
  date: { type: 'Date' },
  json: { type: 'Json' },
  array: { type: 'Array' },
  object: { type: 'Object' },
  null: { type: 'Null' },
} as const satisfies Record<string, PgField>;
export const T = TYPES;

const JSONISH = new Set(['Json', 'Array', 'Object']);
const MAX_DEPTH = 24;

/** BSON comparison order of the types an expression can hold (null lowest). */
const BSON_RANK: Record<string, number> = {
  Null: 1,
  Number: 2,
  String: 3,
  Pointer: 3,
  Object: 4,
  Array: 5,
  Boolean: 8,
  Date: 9,
};

const COMPARE_SQL: Record<string, string> = {
  $eq: '=',
  $ne: '<>',
  $gt: '>',
  $gte: '>=',
  $lt: '<',
  $lte: '<=',
};

export class ExprCompiler implements Exprs {
  private depth = 0;

  constructor(
    readonly params: SqlParams,
    readonly rel: Relation,
    readonly alias: string,
    readonly where: string,
    readonly vars: Readonly<Record<string, Ref>> = {},
  ) {}

  /** The same compiler with more `$$variables` in scope ($map, $filter, $lookup let). */
  withVars(vars: Record<string, Ref>): ExprCompiler {
    return new ExprCompiler(this.params, this.rel, this.alias, this.where, {
      ...this.vars,
      ...vars,
    });
  }

  compile(spec: unknown): Ref {
    this.depth += 1;
    try {
      if (this.depth > MAX_DEPTH) {
        throw new InvalidQueryError(`${this.where}: expression nests deeper than ${MAX_DEPTH}.`);
      }
      return this.value(spec);
    } finally {
      this.depth -= 1;
    }
  }

  private value(spec: unknown): Ref {
    if (spec === null || spec === undefined) return { expr: 'NULL', field: T.null };
    if (typeof spec === 'string') {
      if (spec.startsWith('$$')) return this.variable(spec);
      if (spec.startsWith('$')) return this.fieldRef(spec);
      return this.literal(spec);
    }
    if (typeof spec === 'number' || typeof spec === 'boolean') return this.literal(spec);
    if (Array.isArray(spec)) {
      const items = spec.map((item) => this.jsonb(this.compile(item)));
      return {
        expr: items.length ? `jsonb_build_array(${items.join(', ')})` : `'[]'::jsonb`,
        field: T.array,
      };
    }
    if (!isPlainObject(spec)) {
      throw new InvalidQueryError(`${this.where}: unsupported value ${JSON.stringify(spec)}.`);
    }
    const keys = Object.keys(spec);
    if (keys.length === 1 && keys[0].startsWith('$')) return this.operator(keys[0], spec[keys[0]]);
    if (keys.some((k) => k.startsWith('$'))) {
      throw new InvalidQueryError(
        `${this.where}: an expression object takes exactly one '$operator' key; got ${keys.join(', ')}.`,
      );
    }
    if (spec.__type === 'Date' && typeof spec.iso === 'string') return this.dateLiteral(spec.iso);
    return this.object(spec);
  }

  /** `{ a: <expr>, b: <expr> }` as a jsonb object (missing values left out, as MongoDB does). */
  object(spec: Record<string, unknown>): Ref {
    const parts: string[] = [];
    for (const [key, value] of Object.entries(spec)) {
      if (key.includes('.') || !key) {
        throw new InvalidQueryError(`${this.where}: field name '${key}' may not contain '.'.`);
      }
      parts.push(`${this.params.add(key)}::text, ${this.jsonb(this.compile(value))}`);
    }
    return {
      expr: parts.length
        ? `jsonb_strip_nulls(jsonb_build_object(${parts.join(', ')}))`
        : `'{}'::jsonb`,
      field: T.object,
    };
  }

  literal(value: unknown): Ref {
    if (value === null || value === undefined) return { expr: 'NULL', field: T.null };
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) {
        throw new AgentValidationError(`${this.where}: numbers must be finite.`);
      }
      return { expr: `${this.params.add(value)}::float8`, field: T.number };
    }
    if (typeof value === 'string')
      return { expr: `${this.params.add(value)}::text`, field: T.string };
    if (typeof value === 'boolean') {
      return { expr: `${this.params.add(value)}::boolean`, field: T.boolean };
    }
    return { expr: `${this.params.add(JSON.stringify(value))}::jsonb`, field: T.json };
  }

  dateLiteral(iso: string): Ref {
    if (Number.isNaN(Date.parse(iso))) {
      throw new AgentValidationError(`${this.where}: '${iso}' is not an ISO-8601 date.`);
    }
    return {
      expr: `${this.params.add(new Date(iso).toISOString())}::timestamptz`,
      field: T.date,
    };
  }

  private variable(spec: string): Ref {
    const [name, ...path] = spec.slice(2).split('.');
    if (name === 'ROOT' || name === 'CURRENT') {
      if (!path.length) {
        throw new InvalidQueryError(
          `${this.where}: '$$${name}' (the whole row) is not supported on the PostgreSQL path; name the fields you need.`,
        );
      }
      return this.fieldRef(`$${path.join('.')}`);
    }
    if (name === 'REMOVE') return { expr: 'NULL', field: T.null };
    const bound = Object.prototype.hasOwnProperty.call(this.vars, name)
      ? this.vars[name]
      : undefined;
    if (!bound) {
      throw new InvalidQueryError(`${this.where}: unknown variable '$$${name}'.`);
    }
    return path.length ? this.jsonPath(bound, path, spec) : bound;
  }

  /** A `'$field'` or `'$field.path'` reference (dotted paths reach into jsonb fields). */
  fieldRef(spec: string): Ref {
    const [head, ...rest] = spec.slice(1).split('.');
    const field = known(head, this.rel, this.where);
    // A bigint rank reads as the float8 every other Number is (bigint / bigint would truncate).
    if (field.bigint && !rest.length) {
      return { expr: `${columnRef(head, this.alias)}::float8`, field: T.number };
    }
    const ref = { expr: columnRef(head, this.alias), field };
    return rest.length ? this.jsonPath(ref, rest, spec) : ref;
  }

  private jsonPath(ref: Ref, path: string[], spec: string): Ref {
    if (!JSONISH.has(ref.field.type) || path.some((s) => !s)) {
      throw new InvalidQueryError(
        `${this.where}: '${spec}' reaches into a ${ref.field.type} value.`,
      );
    }
    return { expr: `(${ref.expr} #> ${this.params.add(path)}::text[])`, field: T.json };
  }

  private operator(op: string, arg: unknown): Ref {
    if (op === '$literal') return this.literal(arg);
    const compiler = OPERATORS[op];
    if (!compiler) {
      throw new InvalidQueryError(
        `${this.where}: expression operator '${op}' is not supported on the PostgreSQL path. ` +
          `Supported: ${Object.keys(OPERATORS).sort().join(', ')}.`,
      );
    }
    return compiler(this, arg, op);
  }

  /** The arguments of `op`: exactly `n` when given (a single argument may come unwrapped). */
  args(op: string, arg: unknown, min: number, max = min): Ref[] {
    const list = Array.isArray(arg) ? arg : [arg];
    if (list.length < min || list.length > max) {
      const count = min === max ? `${min}` : `${min} to ${max === Infinity ? 'any' : max}`;
      throw new InvalidQueryError(`${this.where}: ${op} takes ${count} argument(s).`);
    }
    return list.map((a) => this.compile(a));
  }

  // ---- conversions -------------------------------------------------------------------------

  jsonb(ref: Ref): string {
    const { type } = ref.field;
    if (JSONISH.has(type)) return ref.expr;
    if (type === 'Null') return 'NULL::jsonb';
    if (type === 'Date') {
      return `to_jsonb(to_char(${ref.expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
    }
    return `to_jsonb(${ref.expr})`;
  }

  number(ref: Ref, op: string): string {
    const { type } = ref.field;
    if (type === 'Number') return ref.expr;
    if (type === 'Null') return 'NULL::float8';
    if (JSONISH.has(type)) {
      return `(CASE WHEN jsonb_typeof(${ref.expr}) = 'number' THEN (${ref.expr} #>> '{}')::float8 END)`;
    }
    throw new InvalidQueryError(`${this.where}: ${op} needs numbers, got a ${type} value.`);
  }

  text(ref: Ref, op: string): string {
    const { type } = ref.field;
    if (type === 'String' || type === 'Pointer' || type === 'File') return ref.expr;
    if (type === 'Null') return 'NULL::text';
    if (JSONISH.has(type)) {
      return `(CASE WHEN jsonb_typeof(${ref.expr}) = 'string' THEN ${ref.expr} #>> '{}' END)`;
    }
    throw new InvalidQueryError(`${this.where}: ${op} needs strings, got a ${type} value.`);
  }

  date(ref: Ref, op: string): string {
    if (ref.field.type === 'Date') return ref.expr;
    if (ref.field.type === 'Null') return 'NULL::timestamptz';
    throw new InvalidQueryError(
      `${this.where}: ${op} needs a Date, got a ${ref.field.type} value.`,
    );
  }

  array(ref: Ref, op: string): string {
    const { type } = ref.field;
    if (type === 'Null') return 'NULL::jsonb';
    if (JSONISH.has(type)) {
      return `(CASE WHEN jsonb_typeof(${ref.expr}) = 'array' THEN ${ref.expr} END)`;
    }
    throw new InvalidQueryError(`${this.where}: ${op} needs an array, got a ${type} value.`);
  }

  /** MongoDB truthiness: false, null, missing and 0 are false; everything else is true. */
  truthy(ref: Ref): string {
    const e = ref.expr;
    switch (ref.field.type) {
      case 'Boolean':
        return `COALESCE(${e}, FALSE)`;
      case 'Number':
        return `COALESCE(${e} <> 0, FALSE)`;
      case 'Null':
        return 'FALSE';
      case 'Json':
        return `(${e} IS NOT NULL AND ${e} NOT IN ('null'::jsonb, 'false'::jsonb, '0'::jsonb))`;
      default:
        return `(${e} IS NOT NULL)`;
    }
  }

  /** Two values of (possibly) different types compared in BSON order; null is the lowest. */
  compare(op: string, a: Ref, b: Ref): string {
    const sqlOp = COMPARE_SQL[op];
    const ta = typeClass(a.field.type);
    const tb = typeClass(b.field.type);
    if (ta === 'Json' || tb === 'Json') {
      const x = `COALESCE(${this.jsonb(a)}, 'null'::jsonb)`;
      const y = `COALESCE(${this.jsonb(b)}, 'null'::jsonb)`;
      const xr = jsonRank(x);
      const yr = jsonRank(y);
      const same = `(${xr} = ${yr} AND ${x} ${sqlOp} ${y})`;
      const rank = op === '$eq' ? 'FALSE' : op === '$ne' ? 'TRUE' : `(${xr} ${sqlOp} ${yr})`;
      return `(CASE WHEN ${xr} = ${yr} THEN ${same} ELSE ${rank} END)`;
    }
    if (ta === 'Null' || tb === 'Null' || ta !== tb) {
      const ra = BSON_RANK[ta] ?? 99;
      const rb = BSON_RANK[tb] ?? 99;
      const constant = op === '$eq' ? false : op === '$ne' ? true : compareNumbers(op, ra, rb);
      return this.nullCases(op, a.expr, b.expr, constant ? 'TRUE' : 'FALSE');
    }
    const x = ta === 'String' ? `${a.expr} COLLATE "C"` : a.expr;
    return this.nullCases(op, x, b.expr, `(${x} ${sqlOp} ${b.expr})`);
  }

  /** `CASE` over missing values: null equals null and sorts before everything. */
  private nullCases(op: string, x: string, y: string, both: string): string {
    const r = (bothNull: boolean, xNull: boolean, yNull: boolean) =>
      `CASE WHEN ${x} IS NULL AND ${y} IS NULL THEN ${bothNull} WHEN ${x} IS NULL THEN ${xNull} ` +
      `WHEN ${y} IS NULL THEN ${yNull} ELSE NULL END`;
    const table: Record<string, [boolean, boolean, boolean]> = {
      $eq: [true, false, false],
      $ne: [false, true, true],
      $gt: [false, false, true],
      $gte: [true, false, true],
      $lt: [false, true, false],
      $lte: [true, true, false],
    };
    const [bn, xn, yn] = table[op];
    return `(CASE WHEN ${x} IS NULL OR ${y} IS NULL THEN (${r(bn, xn, yn)}) ELSE ${both} END)`;
  }
}

function typeClass(type: string): string {
  if (JSONISH.has(type)) return 'Json';
  if (type === 'Pointer' || type === 'File') return 'String';
  return type;
}

function compareNumbers(op: string, a: number, b: number): boolean {
  switch (op) {
    case '$gt':
      return a > b;
    case '$gte':
      return a >= b;
    case '$lt':
      return a < b;
    default:
      return a <= b;
  }
}

/** The BSON rank of a jsonb value, so values of different JSON types order as MongoDB orders them. */
export function jsonRank(x: string): string {
  return (
    `(CASE jsonb_typeof(${x}) WHEN 'number' THEN 2 WHEN 'string' THEN 3 WHEN 'object' THEN 4 ` +
    `WHEN 'array' THEN 5 WHEN 'boolean' THEN 8 ELSE 1 END)`
  );
}

function comparison(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a, b] = c.args(op, arg, 2);
  if (op === '$cmp') {
    const gt = c.compare('$gt', a, b);
    const lt = c.compare('$lt', a, b);
    return {
      expr: `(CASE WHEN ${gt} THEN 1 WHEN ${lt} THEN -1 ELSE 0 END)::float8`,
      field: T.number,
    };
  }
  return { expr: c.compare(op, a, b), field: T.boolean };
}

function logical(c: ExprCompiler, arg: unknown, op: string): Ref {
  if (op === '$not') {
    const [a] = c.args(op, arg, 1);
    return { expr: `(NOT ${c.truthy(a)})`, field: T.boolean };
  }
  const parts = c.args(op, arg, 0, Infinity).map((a) => c.truthy(a));
  if (!parts.length) return { expr: op === '$and' ? 'TRUE' : 'FALSE', field: T.boolean };
  return { expr: `(${parts.join(op === '$and' ? ' AND ' : ' OR ')})`, field: T.boolean };
}

/** The common type of the branches of a conditional; mixed types come back as jsonb. */
function unify(c: ExprCompiler, refs: Ref[]): Ref[] {
  const types = new Set(refs.map((r) => r.field.type).filter((t) => t !== 'Null'));
  if (types.size <= 1) {
    const [only] = [...types];
    const cast = only ? SQL_CAST[only] : undefined;
    return refs.map((r) =>
      r.field.type === 'Null' && only
        ? { expr: `NULL${cast ? `::${cast}` : ''}`, field: r.field }
        : r,
    );
  }
  return refs.map((r) => ({ expr: c.jsonb(r), field: T.json }));
}

const SQL_CAST: Record<string, string> = {
  Number: 'float8',
  String: 'text',
  Pointer: 'text',
  Boolean: 'boolean',
  Date: 'timestamptz',
  Json: 'jsonb',
  Array: 'jsonb',
  Object: 'jsonb',
};

function resultField(refs: Ref[]): PgField {
  const found = refs.find((r) => r.field.type !== 'Null');
  return found ? found.field : T.null;
}

function cond(c: ExprCompiler, arg: unknown, op: string): Ref {
  let parts: unknown[];
  if (Array.isArray(arg)) parts = arg;
  else if (isPlainObject(arg)) parts = [arg.if, arg.then, arg.else];
  else
    throw new InvalidQueryError(`${c.where}: ${op} takes [if, then, else] or { if, then, else }.`);
  if (parts.length !== 3) throw new InvalidQueryError(`${c.where}: ${op} takes if, then and else.`);
  const test = c.truthy(c.compile(parts[0]));
  const [then, otherwise] = unify(c, [c.compile(parts[1]), c.compile(parts[2])]);
  return {
    expr: `(CASE WHEN ${test} THEN ${then.expr} ELSE ${otherwise.expr} END)`,
    field: resultField([then, otherwise]),
  };
}

function ifNull(c: ExprCompiler, arg: unknown, op: string): Ref {
  const refs = unify(c, c.args(op, arg, 2, Infinity));
  const exprs = refs.map((r) =>
    r.field.type === 'Json' ? `NULLIF(${r.expr}, 'null'::jsonb)` : r.expr,
  );
  return { expr: `COALESCE(${exprs.join(', ')})`, field: resultField(refs) };
}

function switchOp(c: ExprCompiler, arg: unknown, op: string): Ref {
  if (!isPlainObject(arg) || !Array.isArray(arg.branches) || arg.branches.length === 0) {
    throw new InvalidQueryError(`${c.where}: ${op} takes { branches: [{ case, then }], default }.`);
  }
  const tests: string[] = [];
  const values: Ref[] = [];
  for (const branch of arg.branches) {
    if (!isPlainObject(branch) || !('case' in branch) || !('then' in branch)) {
      throw new InvalidQueryError(`${c.where}: each ${op} branch is { case, then }.`);
    }
    tests.push(c.truthy(c.compile(branch.case)));
    values.push(c.compile(branch.then));
  }
  if (!('default' in arg)) {
    throw new InvalidQueryError(
      `${c.where}: ${op} needs a 'default' on the PostgreSQL path (MongoDB fails the query when no branch matches).`,
    );
  }
  values.push(c.compile(arg.default));
  const refs = unify(c, values);
  const whens = tests.map((t, i) => `WHEN ${t} THEN ${refs[i].expr}`).join(' ');
  return {
    expr: `(CASE ${whens} ELSE ${refs[refs.length - 1].expr} END)`,
    field: resultField(refs),
  };
}

function typeOp(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  const names: Record<string, string> = {
    Number: 'double',
    String: 'string',
    Pointer: 'string',
    Boolean: 'bool',
    Date: 'date',
    Array: 'array',
    Object: 'object',
  };
  if (typeClass(a.field.type) === 'Json') {
    return {
      expr:
        `(CASE jsonb_typeof(${a.expr}) WHEN 'number' THEN 'double' WHEN 'string' THEN 'string' ` +
        `WHEN 'boolean' THEN 'bool' WHEN 'array' THEN 'array' WHEN 'object' THEN 'object' ` +
        `WHEN 'null' THEN 'null' ELSE 'missing' END)`,
      field: T.string,
    };
  }
  const name = names[a.field.type];
  if (!name)
    throw new InvalidQueryError(`${c.where}: ${op} of a ${a.field.type} value is not supported.`);
  return {
    expr: `(CASE WHEN ${a.expr} IS NULL THEN 'missing' ELSE ${c.params.add(name)}::text END)`,
    field: T.string,
  };
}

type LocalOperator = (c: ExprCompiler, arg: unknown, op: string) => Ref;

export const OPERATORS: Record<string, LocalOperator | OperatorCompiler> = {
  $eq: comparison,
  $ne: comparison,
  $gt: comparison,
  $gte: comparison,
  $lt: comparison,
  $lte: comparison,
  $cmp: comparison,
  $and: logical,
  $or: logical,
  $not: logical,
  $cond: cond,
  $ifNull: ifNull,
  $switch: switchOp,
  $type: typeOp,
  ...arithmeticOperators,
  ...stringOperators,
  ...arrayOperators,
  ...dateOperators,
};
