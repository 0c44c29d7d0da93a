import { AgentValidationError, InvalidQueryError } from '../../core/errors';
import { withinBox } from '../../query/constraint-translator';
import { columnRef } from './pg-identifiers';
import { isColumnField, ownField, type PgField } from './pg-schema';
import type { SqlParams } from './sql-params';
import { isPlainRecord } from '../../core/plain-object';

/** A Parse query `where` in API field names. */
export type Where = Record<string, unknown>;

/** The fields a where may name: the visible columns of a class, or of a pipeline stage's rows. */
export interface WhereFields {
  fields: Record<string, PgField>;
  /**
   * The fields may be named in an error. A class's visible columns may not: this path knows
   * nothing of the agent's allowlist, so they can include fields the agent may not use.
   */
  listable?: boolean;
}

/** What an unknown-field refusal adds: the usable fields when they are known, else where to look. */
export function fieldsHint(target: WhereFields, what: string): string {
  if (!target.listable) return 'get_schema lists the fields you can use.';
  const names = Object.keys(target.fields).filter((n) => isColumnField(target.fields[n]));
  return `${what}: ${names.slice(0, 40).join(', ') || '(none)'}.`;
}

export const SUPPORTED_LOGICAL_OPERATORS = ['$and', '$or', '$nor'] as const;
export const SUPPORTED_FIELD_OPERATORS = [
  '$eq',
  '$ne',
  '$lt',
  '$lte',
  '$gt',
  '$gte',
  '$in',
  '$nin',
  '$exists',
  '$regex',
  '$options',
  '$all',
  '$containedBy',
  '$size',
] as const;

const MAX_DEPTH = 16;

const SCALAR_SQL_TYPE: Record<string, string> = {
  String: 'text',
  File: 'text',
  Pointer: 'text',
  Number: 'double precision',
  Boolean: 'boolean',
  Date: 'timestamptz',
  // A value a pipeline stage set to null: only $exists and null equality can match it.
  Null: 'text',
};
const JSON_TYPES = new Set(['Object', 'Json']);

const COMPARISON_SQL = { $lt: '<', $lte: '<=', $gt: '>', $gte: '>=' } as const;
type ComparisonOperator = keyof typeof COMPARISON_SQL;

/**
 * Compiles a Parse `where` into a SQL boolean expression over the columns of `target`. Values become
 * bind parameters in `params`; field names must be columns of `target` (quoted, never interpolated);
 * operators outside the supported set are refused. `alias` qualifies column references.
 */
export function compileWhere(
  where: unknown,
  target: WhereFields,
  params: SqlParams,
  alias?: string,
): string {
  return new WhereCompiler(target, params, alias).object(where, 0);
}

function unsupported(op: string, place: string): InvalidQueryError {
  return new InvalidQueryError(
    `Operator '${op}' is not supported ${place} on the PostgreSQL path. Supported: ` +
      `${SUPPORTED_LOGICAL_OPERATORS.join(', ')} at the top level; ` +
      `${SUPPORTED_FIELD_OPERATORS.join(', ')} on a field.`,
  );
}

interface Target {
  name: string;
  field: PgField;
  expr: string;
  /** 'scalar': typed column; 'array': jsonb array column; 'json': any other jsonb value. */
  kind: 'scalar' | 'array' | 'json';
}

class WhereCompiler {
  constructor(
    private readonly target: WhereFields,
    private readonly params: SqlParams,
    private readonly alias?: string,
  ) {}

  object(where: unknown, depth: number): string {
    if (depth > MAX_DEPTH) {
      throw new InvalidQueryError(`where is nested deeper than ${MAX_DEPTH} levels.`);
    }
    if (!isPlainRecord(where)) throw new InvalidQueryError('where must be a JSON object.');
    const parts: string[] = [];
    for (const [key, value] of Object.entries(where)) {
      if (key.startsWith('$')) parts.push(this.logical(key, value, depth));
      else parts.push(this.field(key, value));
    }
    return parts.length === 0 ? 'TRUE' : parts.length === 1 ? parts[0] : `(${parts.join(' AND ')})`;
  }

  private logical(op: string, value: unknown, depth: number): string {
    if (!(SUPPORTED_LOGICAL_OPERATORS as readonly string[]).includes(op)) {
      throw unsupported(op, 'at the top level of where');
    }
    if (!Array.isArray(value) || value.length === 0) {
      throw new InvalidQueryError(`${op} takes a non-empty array of where objects.`);
    }
    const parts = value.map((w) => this.object(w, depth + 1));
    if (op === '$and') return `(${parts.join(' AND ')})`;
    const any = `(${parts.join(' OR ')})`;
    // NOT of an unknown (NULL) must still match, as MongoDB's $nor does for missing fields.
    return op === '$or' ? any : `(NOT COALESCE(${any}, FALSE))`;
  }

  private resolve(path: string): Target {
    const segments = path.split('.');
    const [head, ...rest] = segments;
    const field = ownField(this.target.fields, head);
    if (!isColumnField(field) || segments.some((s) => s.length === 0)) {
      throw new AgentValidationError(
        `Unknown field '${path}' in where: not a field this reader can filter on. ` +
          fieldsHint(this.target, 'Fields you can filter on'),
      );
    }
    const column = columnRef(head, this.alias);
    if (rest.length > 0) {
      if (!JSON_TYPES.has(field.type)) {
        throw new InvalidQueryError(
          `'${path}': a dotted path only reaches into an Object field; '${head}' is ${field.type}.`,
        );
      }
      const expr = `(${column} #> ${this.params.add(rest)}::text[])`;
      return { name: path, field: { type: 'Json' }, expr, kind: 'json' };
    }
    if (field.type === 'Array') return { name: path, field, expr: column, kind: 'array' };
    if (JSON_TYPES.has(field.type)) return { name: path, field, expr: column, kind: 'json' };
    if (!SCALAR_SQL_TYPE[field.type]) {
      throw new InvalidQueryError(
        `'${path}' is a ${field.type} field, which where cannot filter on the PostgreSQL path.`,
      );
    }
    return { name: path, field, expr: column, kind: 'scalar' };
  }

  private field(path: string, value: unknown): string {
    if (isPlainRecord(value) && '$within' in value) return this.within(path, value);
    const target = this.resolve(path);
    const isOperatorObject =
      isPlainRecord(value) && Object.keys(value).some((key) => key.startsWith('$'));
    if (!isOperatorObject) return this.equals(target, value);
    const ops = value as Record<string, unknown>;
    const keys = Object.keys(ops);
    const plain = keys.find((key) => !key.startsWith('$'));
    if (plain !== undefined) {
      throw new InvalidQueryError(
        `'${path}': do not mix operators with the plain key '${plain}' in one constraint.`,
      );
    }
    if ('$options' in ops && !('$regex' in ops)) {
      throw new InvalidQueryError(`'${path}': $options is only valid next to $regex.`);
    }
    const parts: string[] = [];
    for (const op of keys) {
      if (op === '$options') continue;
      parts.push(this.operator(target, op, ops[op], ops.$options));
    }
    return parts.length === 1 ? parts[0] : `(${parts.join(' AND ')})`;
  }

  /**
   * Parse's `$within: { $box: [southwest, northeast] }` on a GeoPoint column (a PostgreSQL point,
   * x = longitude, y = latitude), as Parse Server runs it: the point lies in or on the box.
   */
  private within(path: string, constraint: Record<string, unknown>): string {
    const field = ownField(this.target.fields, path);
    if (!isColumnField(field) || path.includes('.')) {
      throw new AgentValidationError(
        `Unknown field '${path}' in where: not a field this reader can filter on. ` +
          fieldsHint(this.target, 'Fields you can filter on'),
      );
    }
    if (field.type !== 'GeoPoint') {
      throw new InvalidQueryError(`'${path}': $within filters GeoPoint fields, not ${field.type}.`);
    }
    const others = Object.keys(constraint).filter((k) => k !== '$within');
    if (others.length) {
      throw new InvalidQueryError(
        `'${path}': $within cannot be combined with ${others.join(', ')} on the PostgreSQL path; put the other constraint in an $and clause.`,
      );
    }
    const [southwest, northeast] = withinBox(path, constraint.$within);
    const corner = (p: { latitude: number; longitude: number }) =>
      `point(${this.params.add(p.longitude)}::float8, ${this.params.add(p.latitude)}::float8)`;
    return `(${columnRef(path, this.alias)} <@ box(${corner(southwest)}, ${corner(northeast)}))`;
  }

  private operator(target: Target, op: string, value: unknown, options: unknown): string {
    switch (op) {
      case '$eq':
        return this.equals(target, value);
      case '$ne':
        return this.notEquals(target, value);
      case '$lt':
      case '$lte':
      case '$gt':
      case '$gte':
        return this.compare(target, op, value);
      case '$in':
        return this.inList(target, value, false);
      case '$nin':
        return this.inList(target, value, true);
      case '$exists':
        if (typeof value !== 'boolean') {
          throw new InvalidQueryError(`'${target.name}': $exists takes true or false.`);
        }
        return `(${target.expr} IS ${value ? 'NOT ' : ''}NULL)`;
      case '$regex':
        return this.regex(target, value, options);
      case '$all':
        return this.arrayOp(target, '$all', value);
      case '$containedBy':
        return this.arrayOp(target, '$containedBy', value);
      case '$size':
        return this.size(target, value);
      default:
        throw unsupported(op, `on field '${target.name}'`);
    }
  }

  private equals(target: Target, value: unknown): string {
    if (value === null || value === undefined) {
      if (target.kind === 'json')
        return `(${target.expr} IS NULL OR ${target.expr} = 'null'::jsonb)`;
      return `(${target.expr} IS NULL)`;
    }
    if (target.kind === 'scalar') return `(${target.expr} = ${this.scalar(target, value)})`;
    if (target.kind === 'array' && !Array.isArray(value)) {
      // MongoDB semantics: an array field equals a scalar when it contains it.
      return `(${target.expr} @> ${this.json(target, [value])})`;
    }
    return `(${target.expr} = ${this.json(target, value)})`;
  }

  private notEquals(target: Target, value: unknown): string {
    if (value === null || value === undefined) {
      if (target.kind === 'json') {
        return `(${target.expr} IS NOT NULL AND ${target.expr} <> 'null'::jsonb)`;
      }
      return `(${target.expr} IS NOT NULL)`;
    }
    if (target.kind === 'scalar') {
      return `(${target.expr} IS DISTINCT FROM ${this.scalar(target, value)})`;
    }
    if (target.kind === 'array' && !Array.isArray(value)) {
      return `(NOT COALESCE(${target.expr} @> ${this.json(target, [value])}, FALSE))`;
    }
    return `(${target.expr} IS DISTINCT FROM ${this.json(target, value)})`;
  }

  private compare(target: Target, op: ComparisonOperator, value: unknown): string {
    const sqlOp = COMPARISON_SQL[op];
    if (target.kind === 'scalar') {
      if (!['String', 'Number', 'Date'].includes(target.field.type)) {
        throw new InvalidQueryError(
          `'${target.name}': ${op} compares String, Number or Date fields, not ${target.field.type}.`,
        );
      }
      return `(${target.expr} ${sqlOp} ${this.scalar(target, value)})`;
    }
    if (target.kind === 'json' && (typeof value === 'number' || typeof value === 'string')) {
      // Compare like MongoDB: only values of the same JSON type are ordered against each other.
      const bound = this.json(target, value);
      return `(jsonb_typeof(${target.expr}) = jsonb_typeof(${bound}) AND ${target.expr} ${sqlOp} ${bound})`;
    }
    throw new InvalidQueryError(
      `'${target.name}': ${op} needs a String, Number or Date field (or a number or string inside an Object).`,
    );
  }

  private inList(target: Target, value: unknown, negate: boolean): string {
    const op = negate ? '$nin' : '$in';
    if (!Array.isArray(value))
      throw new InvalidQueryError(`'${target.name}': ${op} takes an array.`);
    const hasNull = value.some((v) => v === null);
    const items = value.filter((v) => v !== null);
    let match: string;
    if (target.kind === 'scalar') {
      const sqlType = SCALAR_SQL_TYPE[target.field.type];
      const list = items.map((v) => this.scalarValue(target, v));
      match = `${target.expr} = ANY(${this.params.add(list)}::${sqlType}[])`;
    } else {
      const wrap = (v: unknown) =>
        JSON.stringify(this.jsonValue(target, target.kind === 'array' ? [v] : v));
      const list = items.map(wrap);
      match =
        target.kind === 'array'
          ? `${target.expr} @> ANY(${this.params.add(list)}::jsonb[])`
          : `${target.expr} = ANY(${this.params.add(list)}::jsonb[])`;
    }
    const isNull =
      target.kind === 'json'
        ? `(${target.expr} IS NULL OR ${target.expr} = 'null'::jsonb)`
        : `${target.expr} IS NULL`;
    if (!negate) return hasNull ? `(COALESCE(${match}, FALSE) OR ${isNull})` : `(${match})`;
    return hasNull
      ? `(NOT COALESCE(${match}, FALSE) AND NOT ${isNull})`
      : `(NOT COALESCE(${match}, FALSE))`;
  }

  private regex(target: Target, value: unknown, options: unknown): string {
    if (typeof value !== 'string') {
      throw new InvalidQueryError(`'${target.name}': $regex takes a string pattern.`);
    }
    if (options !== undefined && (typeof options !== 'string' || !/^i?$/.test(options))) {
      throw new InvalidQueryError(
        `'${target.name}': $options supports only 'i' (case-insensitive) on the PostgreSQL path.`,
      );
    }
    const op = options === 'i' ? '~*' : '~';
    if (target.kind === 'scalar' && ['String', 'File'].includes(target.field.type)) {
      return `(${target.expr} ${op} ${this.params.add(value)})`;
    }
    if (target.kind === 'json') {
      return `(jsonb_typeof(${target.expr}) = 'string' AND (${target.expr} #>> '{}') ${op} ${this.params.add(value)})`;
    }
    throw new InvalidQueryError(
      `'${target.name}': $regex needs a String field, not ${target.field.type}.`,
    );
  }

  private arrayOp(target: Target, op: '$all' | '$containedBy', value: unknown): string {
    if (target.kind === 'scalar') {
      throw new InvalidQueryError(
        `'${target.name}': ${op} needs an Array field, not ${target.field.type}.`,
      );
    }
    if (!Array.isArray(value))
      throw new InvalidQueryError(`'${target.name}': ${op} takes an array.`);
    if (op === '$all' && value.length === 0) return 'FALSE'; // MongoDB: an empty $all matches nothing
    const bound = this.json(target, value);
    const sqlOp = op === '$all' ? '@>' : '<@';
    return `(jsonb_typeof(${target.expr}) = 'array' AND ${target.expr} ${sqlOp} ${bound})`;
  }

  private size(target: Target, value: unknown): string {
    if (target.kind === 'scalar') {
      throw new InvalidQueryError(
        `'${target.name}': $size needs an Array field, not ${target.field.type}.`,
      );
    }
    const n = this.params.addCount(value, `'${target.name}': $size`);
    return `(jsonb_typeof(${target.expr}) = 'array' AND jsonb_array_length(${target.expr}) = ${n})`;
  }

  /** A typed scalar bind parameter for a column of `target`'s type. */
  private scalar(target: Target, value: unknown): string {
    const checked = this.scalarValue(target, value);
    // An integer against a bigint rank stays bigint: PostgreSQL then reads `rank = 1` (or <, <=)
    // as a run condition and stops the window early, which it cannot do through a float8 cast.
    const sqlType =
      target.field.bigint && Number.isSafeInteger(checked)
        ? 'bigint'
        : SCALAR_SQL_TYPE[target.field.type];
    return `${this.params.add(checked)}::${sqlType}`;
  }

  private json(target: Target, value: unknown): string {
    return `${this.params.add(JSON.stringify(this.jsonValue(target, value)))}::jsonb`;
  }

  private scalarValue(target: Target, value: unknown): string | number | boolean {
    const { type } = target.field;
    const bad = (expected: string) =>
      new AgentValidationError(
        `'${target.name}' is a ${type} field: expected ${expected}, got ${short(value)}.`,
      );
    switch (type) {
      case 'String':
        if (typeof value !== 'string') throw bad('a string');
        return value;
      case 'File':
        if (typeof value === 'string') return value;
        if (isPlainRecord(value) && value.__type === 'File' && typeof value.name === 'string') {
          return value.name;
        }
        throw bad("a file name or {__type:'File', name}");
      case 'Number':
        if (typeof value !== 'number' || !Number.isFinite(value)) throw bad('a finite number');
        return value;
      case 'Boolean':
        if (typeof value !== 'boolean') throw bad('true or false');
        return value;
      case 'Date':
        return dateValue(value, bad);
      case 'Pointer':
        return pointerValue(value, target.field.targetClass, bad);
      default:
        throw bad('a supported value');
    }
  }

  /** Plain JSON for a jsonb comparison; `$`-keyed objects are operators in the wrong place. */
  private jsonValue(target: Target, value: unknown, depth = 0): unknown {
    if (depth > MAX_DEPTH)
      throw new InvalidQueryError(`'${target.name}': value is nested too deeply.`);
    if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) {
        throw new AgentValidationError(`'${target.name}': numbers must be finite.`);
      }
      return value;
    }
    if (value instanceof Date) return { __type: 'Date', iso: value.toISOString() };
    if (Array.isArray(value)) return value.map((v) => this.jsonValue(target, v, depth + 1));
    if (isPlainRecord(value)) {
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        if (key.startsWith('$')) throw unsupported(key, `inside the value of '${target.name}'`);
        out[key] = this.jsonValue(target, v, depth + 1);
      }
      return out;
    }
    throw new AgentValidationError(`'${target.name}': ${typeof value} values are not supported.`);
  }
}

function dateValue(value: unknown, bad: (expected: string) => Error): string {
  let iso: unknown = value;
  if (value instanceof Date) iso = value.toISOString();
  else if (isPlainRecord(value)) {
    if (value.__type !== 'Date') throw bad("{__type:'Date', iso}");
    iso = value.iso;
  }
  if (typeof iso !== 'string' || Number.isNaN(Date.parse(iso))) {
    throw bad("{__type:'Date', iso} with an ISO-8601 date");
  }
  return new Date(iso).toISOString();
}

function pointerValue(
  value: unknown,
  targetClass: string | undefined,
  bad: (expected: string) => Error,
): string {
  if (typeof value === 'string') return value;
  if (isPlainRecord(value) && value.__type === 'Pointer' && typeof value.objectId === 'string') {
    if (targetClass && value.className !== undefined && value.className !== targetClass) {
      throw bad(`a pointer to ${targetClass}`);
    }
    return value.objectId;
  }
  throw bad(`an objectId or {__type:'Pointer', className:'${targetClass ?? '...'}', objectId}`);
}

function short(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}
