import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import type { Exprs as ExprCompiler, OperatorCompiler } from './expr-types';
import type { Ref } from './relation';

/** Arithmetic, string and array expression operators, MongoDB semantics on SQL values. */

const NUMBER = { type: 'Number' } as const;
const STRING = { type: 'String' } as const;
const BOOLEAN = { type: 'Boolean' } as const;
const ARRAY = { type: 'Array' } as const;
const JSON_VALUE = { type: 'Json' } as const;

const num = (expr: string): Ref => ({ expr, field: NUMBER });

/** `$add`: numbers, or one date plus milliseconds. */
function add(c: ExprCompiler, arg: unknown, op: string): Ref {
  const refs = c.args(op, arg, 1, Infinity);
  const dates = refs.filter((r) => r.field.type === 'Date');
  if (dates.length > 1) throw new InvalidQueryError(`${c.where}: $add takes at most one date.`);
  const numbers = refs.filter((r) => r.field.type !== 'Date').map((r) => c.number(r, op));
  const sum = numbers.length ? `(${numbers.join(' + ')})` : '0';
  if (!dates.length) return num(sum);
  return {
    expr: `(${dates[0].expr} + make_interval(secs => ${sum} / 1000.0))`,
    field: { type: 'Date' },
  };
}

/** `$subtract`: numbers; a date minus a date (milliseconds) or minus milliseconds (a date). */
function subtract(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a, b] = c.args(op, arg, 2);
  if (a.field.type === 'Date' && b.field.type === 'Date') {
    return num(`(EXTRACT(EPOCH FROM (${a.expr} - ${b.expr})) * 1000)::float8`);
  }
  if (a.field.type === 'Date') {
    return {
      expr: `(${a.expr} - make_interval(secs => ${c.number(b, op)} / 1000.0))`,
      field: { type: 'Date' },
    };
  }
  return num(`(${c.number(a, op)} - ${c.number(b, op)})`);
}

function multiply(c: ExprCompiler, arg: unknown, op: string): Ref {
  const refs = c.args(op, arg, 1, Infinity).map((r) => c.number(r, op));
  return num(`(${refs.join(' * ')})`);
}

/** `$divide` and `$mod`: a zero divisor gives null here (MongoDB fails the whole query). */
function divide(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a, b] = c.args(op, arg, 2).map((r) => c.number(r, op));
  if (op === '$divide') return num(`(${a} / NULLIF(${b}, 0))`);
  return num(`(${a} - ${b} * trunc(${a} / NULLIF(${b}, 0)))`);
}

const UNARY_MATH: Record<string, string> = {
  $abs: 'abs',
  $ceil: 'ceil',
  $floor: 'floor',
  $exp: 'exp',
  $sqrt: 'sqrt',
};

function unaryMath(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  const x = c.number(a, op);
  // Out of the domain MongoDB fails the query; here the value is null.
  if (op === '$ln') return num(`(CASE WHEN ${x} > 0 THEN ln(${x}) END)`);
  if (op === '$log10') return num(`(CASE WHEN ${x} > 0 THEN log(${x}) END)`);
  if (op === '$sqrt') return num(`(CASE WHEN ${x} >= 0 THEN sqrt(${x}) END)`);
  return num(`${UNARY_MATH[op]}(${x})`);
}

function pow(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a, b] = c.args(op, arg, 2).map((r) => c.number(r, op));
  return num(`power(${a}, ${b})`);
}

/** `$round` rounds half to even, as MongoDB does; `$trunc` rounds towards zero. */
function round(c: ExprCompiler, arg: unknown, op: string): Ref {
  const refs = c.args(op, arg, 1, 2);
  const x = c.number(refs[0], op);
  const places = refs[1] ? c.number(refs[1], op) : '0::float8';
  const scale = `power(10::float8, ${places})`;
  if (op === '$trunc') return num(`(trunc(${x} * ${scale}) / ${scale})`);
  const v = `(${x} * ${scale})`;
  const even =
    `(CASE WHEN ${v} - floor(${v}) = 0.5 THEN ` +
    `(CASE WHEN mod(floor(${v})::numeric, 2) = 0 THEN floor(${v}) ELSE floor(${v}) + 1 END) ` +
    `ELSE round(${v}) END)`;
  return num(`(${even} / ${scale})`);
}

// ---- strings ----------------------------------------------------------------------------------

function concat(c: ExprCompiler, arg: unknown, op: string): Ref {
  const parts = c.args(op, arg, 1, Infinity).map((r) => c.text(r, op));
  // || is null when any part is null, as $concat is.
  return { expr: `(${parts.join(' || ')})`, field: STRING };
}

function caseOp(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  const fn = op === '$toUpper' ? 'upper' : 'lower';
  // MongoDB turns null into the empty string here.
  return { expr: `${fn}(COALESCE(${c.text(a, op)}, ''))`, field: STRING };
}

function substr(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [s, start, len] = c.args(op, arg, 3);
  const text = `COALESCE(${c.text(s, op)}, '')`;
  const from = `(${c.number(start, op)})::int`;
  const count = `(${c.number(len, op)})::int`;
  return {
    expr: `(CASE WHEN ${count} < 0 THEN substr(${text}, ${from} + 1) ELSE substr(${text}, ${from} + 1, ${count}) END)`,
    field: STRING,
  };
}

function strLen(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [s] = c.args(op, arg, 1);
  return num(`char_length(${c.text(s, op)})::float8`);
}

function indexOf(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [s, sub] = c.args(op, arg, 2);
  return num(`(strpos(${c.text(s, op)}, ${c.text(sub, op)}) - 1)::float8`);
}

function strcasecmp(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a, b] = c.args(op, arg, 2).map((r) => `lower(COALESCE(${c.text(r, op)}, '')) COLLATE "C"`);
  return num(`(CASE WHEN ${a} > ${b} THEN 1 WHEN ${a} < ${b} THEN -1 ELSE 0 END)::float8`);
}

function trim(c: ExprCompiler, arg: unknown, op: string): Ref {
  if (!isPlainObject(arg) || !('input' in arg)) {
    throw new InvalidQueryError(`${c.where}: ${op} takes { input, chars? }.`);
  }
  const input = c.text(c.compile(arg.input), op);
  const fn = op === '$trim' ? 'btrim' : op === '$ltrim' ? 'ltrim' : 'rtrim';
  // MongoDB trims whitespace (and NUL) by default.
  const chars = arg.chars === undefined ? `E' \\t\\n\\r\\f\\v'` : c.text(c.compile(arg.chars), op);
  return { expr: `${fn}(${input}, ${chars})`, field: STRING };
}

function split(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [s, d] = c.args(op, arg, 2);
  return {
    expr: `to_jsonb(string_to_array(${c.text(s, op)}, ${c.text(d, op)}))`,
    field: ARRAY,
  };
}

function replaceAll(c: ExprCompiler, arg: unknown, op: string): Ref {
  if (!isPlainObject(arg) || !('input' in arg) || !('find' in arg) || !('replacement' in arg)) {
    throw new InvalidQueryError(`${c.where}: ${op} takes { input, find, replacement }.`);
  }
  const [input, find, replacement] = [arg.input, arg.find, arg.replacement].map((v) =>
    c.text(c.compile(v), op),
  );
  if (op === '$replaceAll') {
    return { expr: `replace(${input}, ${find}, ${replacement})`, field: STRING };
  }
  return {
    expr: `overlay(${input} placing ${replacement} from strpos(${input}, ${find}) for (CASE WHEN strpos(${input}, ${find}) = 0 THEN 0 ELSE char_length(${find}) END))`,
    field: STRING,
  };
}

function regexMatch(c: ExprCompiler, arg: unknown, op: string): Ref {
  if (!isPlainObject(arg) || !('input' in arg) || typeof arg.regex !== 'string') {
    throw new InvalidQueryError(`${c.where}: ${op} takes { input, regex: 'pattern', options? }.`);
  }
  if (arg.options !== undefined && (typeof arg.options !== 'string' || !/^i?$/.test(arg.options))) {
    throw new InvalidQueryError(`${c.where}: ${op} supports only the 'i' option here.`);
  }
  const input = c.text(c.compile(arg.input), op);
  const sqlOp = arg.options === 'i' ? '~*' : '~';
  return {
    expr: `COALESCE(${input} ${sqlOp} ${c.params.add(arg.regex)}::text, FALSE)`,
    field: BOOLEAN,
  };
}

function toStringOp(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  switch (a.field.type) {
    case 'String':
    case 'Pointer':
      return { expr: a.expr, field: STRING };
    case 'Number':
      return {
        expr: `(CASE WHEN ${a.expr} = trunc(${a.expr}) THEN trunc(${a.expr})::bigint::text ELSE ${a.expr}::text END)`,
        field: STRING,
      };
    case 'Boolean':
      return { expr: `${a.expr}::text`, field: STRING };
    case 'Date':
      return {
        expr: `to_char(${a.expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
        field: STRING,
      };
    case 'Null':
      return { expr: 'NULL::text', field: STRING };
    default:
      return { expr: `(${a.expr} #>> '{}')`, field: STRING };
  }
}

function toNumber(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  let x: string;
  if (a.field.type === 'String') {
    x = `(CASE WHEN ${a.expr} ~ '^\\s*[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?\\s*$' THEN ${a.expr}::float8 END)`;
  } else if (a.field.type === 'Boolean') x = `(CASE WHEN ${a.expr} THEN 1 ELSE 0 END)::float8`;
  else if (a.field.type === 'Date') x = `(EXTRACT(EPOCH FROM ${a.expr}) * 1000)::float8`;
  else x = c.number(a, op);
  return num(op === '$toInt' || op === '$toLong' ? `trunc(${x})` : x);
}

function toBool(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  if (a.field.type === 'Null') return { expr: 'NULL::boolean', field: BOOLEAN };
  return {
    expr: `(CASE WHEN ${a.expr} IS NULL THEN NULL ELSE ${c.truthy(a)} END)`,
    field: BOOLEAN,
  };
}

// ---- arrays -----------------------------------------------------------------------------------

function size(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  return num(`jsonb_array_length(${c.array(a, op)})::float8`);
}

function isArray(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  if (a.field.type === 'Array' || a.field.type === 'Json' || a.field.type === 'Object') {
    return { expr: `COALESCE(jsonb_typeof(${a.expr}) = 'array', FALSE)`, field: BOOLEAN };
  }
  // Still names the value, so every bound parameter appears in the text.
  return { expr: `(${a.expr} IS NULL AND FALSE)`, field: BOOLEAN };
}

function elemAt(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a, i] = c.args(op, arg, 2);
  const arr = c.array(a, op);
  const idx = `(${c.number(i, op)})::int`;
  return {
    expr: `(CASE WHEN ${idx} < 0 THEN ${arr} -> (jsonb_array_length(${arr}) + ${idx}) ELSE ${arr} -> ${idx} END)`,
    field: JSON_VALUE,
  };
}

function firstLast(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [a] = c.args(op, arg, 1);
  const arr = c.array(a, op);
  return { expr: `(${arr} -> ${op === '$first' ? '0' : '-1'})`, field: JSON_VALUE };
}

function inArray(c: ExprCompiler, arg: unknown, op: string): Ref {
  const [v, a] = c.args(op, arg, 2);
  const x = `COALESCE(${c.jsonb(v)}, 'null'::jsonb)`;
  return {
    expr: `EXISTS (SELECT 1 FROM jsonb_array_elements(${c.array(a, op)}) AS e(v) WHERE e.v = ${x})`,
    field: BOOLEAN,
  };
}

function concatArrays(c: ExprCompiler, arg: unknown, op: string): Ref {
  const parts = c.args(op, arg, 1, Infinity).map((r) => c.array(r, op));
  return { expr: `(${parts.join(' || ')})`, field: ARRAY };
}

function slice(c: ExprCompiler, arg: unknown, op: string): Ref {
  const refs = c.args(op, arg, 2, 3);
  const arr = c.array(refs[0], op);
  const e = `${c.params.alias('e')}`;
  if (refs.length === 2) {
    const n = `(${c.number(refs[1], op)})::int`;
    const keep = `(CASE WHEN ${n} >= 0 THEN ${e}.i <= ${n} ELSE ${e}.i > jsonb_array_length(${arr}) + ${n} END)`;
    return {
      expr: `(CASE WHEN ${arr} IS NULL THEN NULL ELSE COALESCE((SELECT jsonb_agg(${e}.v ORDER BY ${e}.i) FROM jsonb_array_elements(${arr}) WITH ORDINALITY AS ${e}(v, i) WHERE ${keep}), '[]'::jsonb) END)`,
      field: ARRAY,
    };
  }
  const pos = `(${c.number(refs[1], op)})::int`;
  const n = `(${c.number(refs[2], op)})::int`;
  const start = `(CASE WHEN ${pos} >= 0 THEN ${pos} ELSE GREATEST(jsonb_array_length(${arr}) + ${pos}, 0) END)`;
  return {
    expr: `(CASE WHEN ${arr} IS NULL THEN NULL ELSE COALESCE((SELECT jsonb_agg(${e}.v ORDER BY ${e}.i) FROM jsonb_array_elements(${arr}) WITH ORDINALITY AS ${e}(v, i) WHERE ${e}.i > ${start} AND ${e}.i <= ${start} + ${n}), '[]'::jsonb) END)`,
    field: ARRAY,
  };
}

/** `$map` / `$filter`: `{ input, as?, in | cond }` with `$$this` (or `as`) bound to each element. */
function mapFilter(c: ExprCompiler, arg: unknown, op: string): Ref {
  const body = op === '$map' ? 'in' : 'cond';
  if (!isPlainObject(arg) || !('input' in arg) || !(body in arg)) {
    throw new InvalidQueryError(`${c.where}: ${op} takes { input, as?, ${body} }.`);
  }
  const name = arg.as ?? 'this';
  if (typeof name !== 'string' || !/^[a-z][A-Za-z0-9_]*$/.test(name)) {
    throw new InvalidQueryError(`${c.where}: ${op}.as must be a lowercase variable name.`);
  }
  const arr = c.array(c.compile(arg.input), op);
  const e = c.params.alias('e');
  const inner = c.withVars({ [name]: { expr: `${e}.v`, field: JSON_VALUE } });
  const value = inner.compile(arg[body]);
  const agg =
    op === '$map'
      ? `SELECT jsonb_agg(COALESCE(${c.jsonb(value)}, 'null'::jsonb) ORDER BY ${e}.i) FROM jsonb_array_elements(${arr}) WITH ORDINALITY AS ${e}(v, i)`
      : `SELECT jsonb_agg(${e}.v ORDER BY ${e}.i) FROM jsonb_array_elements(${arr}) WITH ORDINALITY AS ${e}(v, i) WHERE ${c.truthy(value)}`;
  return {
    expr: `(CASE WHEN ${arr} IS NULL THEN NULL ELSE COALESCE((${agg}), '[]'::jsonb) END)`,
    field: ARRAY,
  };
}

/** `$sum`, `$avg`, `$min`, `$max` over an array argument or over several arguments. */
function arrayFold(c: ExprCompiler, arg: unknown, op: string): Ref {
  const fn = { $sum: 'sum', $avg: 'avg', $min: 'min', $max: 'max' }[op] as string;
  const refs = Array.isArray(arg) ? arg.map((a) => c.compile(a)) : [c.compile(arg)];
  const e = c.params.alias('e');
  let source: string;
  if (refs.length === 1 && refs[0].field.type !== 'Number') {
    source = `jsonb_array_elements(CASE WHEN jsonb_typeof(${c.jsonb(refs[0])}) = 'array' THEN ${c.jsonb(refs[0])} ELSE jsonb_build_array(${c.jsonb(refs[0])}) END) AS ${e}(v)`;
  } else {
    source = `jsonb_array_elements(jsonb_build_array(${refs.map((r) => c.jsonb(r)).join(', ')})) AS ${e}(v)`;
  }
  const value = `(CASE WHEN jsonb_typeof(${e}.v) = 'number' THEN (${e}.v #>> '{}')::float8 END)`;
  const folded = `(SELECT ${fn}(${value}) FROM ${source})`;
  return num(op === '$sum' ? `COALESCE(${folded}, 0)` : folded);
}

export const arithmeticOperators: Record<string, OperatorCompiler> = {
  $add: add,
  $subtract: subtract,
  $multiply: multiply,
  $divide: divide,
  $mod: divide,
  $abs: unaryMath,
  $ceil: unaryMath,
  $floor: unaryMath,
  $exp: unaryMath,
  $sqrt: unaryMath,
  $ln: unaryMath,
  $log10: unaryMath,
  $pow: pow,
  $round: round,
  $trunc: round,
  $toDouble: toNumber,
  $toInt: toNumber,
  $toLong: toNumber,
  $toDecimal: toNumber,
  $toBool: toBool,
  $sum: arrayFold,
  $avg: arrayFold,
  $min: arrayFold,
  $max: arrayFold,
};

export const stringOperators: Record<string, OperatorCompiler> = {
  $concat: concat,
  $toUpper: caseOp,
  $toLower: caseOp,
  $substrCP: substr,
  $substr: substr,
  $strLenCP: strLen,
  $indexOfCP: indexOf,
  $strcasecmp: strcasecmp,
  $trim: trim,
  $ltrim: trim,
  $rtrim: trim,
  $split: split,
  $replaceAll: replaceAll,
  $replaceOne: replaceAll,
  $regexMatch: regexMatch,
  $toString: toStringOp,
};

export const arrayOperators: Record<string, OperatorCompiler> = {
  $size: size,
  $isArray: isArray,
  $arrayElemAt: elemAt,
  $first: firstLast,
  $last: firstLast,
  $in: inArray,
  $concatArrays: concatArrays,
  $slice: slice,
  $map: mapFilter,
  $filter: mapFilter,
};
