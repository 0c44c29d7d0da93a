import {
  DEFAULT_QUERY_COST_LIMITS,
  MAX_QUERY_DEPTH,
  MAX_REGEX_LENGTH,
  type QueryCostLimits,
} from '../core/constants';
import {
  AgentValidationError,
  InvalidQueryError,
  PointerShapeError,
  SecurityBlockedError,
} from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { isInternalField } from './internal-fields';

export type Where = Record<string, unknown>;

/** Operators an agent may use in `where`. Anything else starting with `$` is refused. */
export const ALLOWED_OPERATORS: ReadonlySet<string> = new Set([
  '$lt',
  '$lte',
  '$gt',
  '$gte',
  '$ne',
  '$eq',
  '$in',
  '$nin',
  '$all',
  '$exists',
  '$regex',
  '$options',
  '$text',
  '$search',
  '$near',
  '$nearSphere',
  '$geoWithin',
  '$geoIntersects',
  '$within',
  '$centerSphere',
  '$box',
  '$polygon',
  '$geometry',
  '$maxDistance',
  '$maxDistanceInMiles',
  '$maxDistanceInKilometers',
  '$maxDistanceInRadians',
  '$relatedTo',
  '$inQuery',
  '$notInQuery',
  '$containedIn',
  '$containsAll',
  '$select',
  '$dontSelect',
  '$or',
  '$and',
  '$nor',
]);

/** Operators that run code on the database: refused outright. */
export const CODE_EXECUTION_OPERATORS: ReadonlySet<string> = new Set([
  '$where',
  '$function',
  '$accumulator',
  '$expr',
]);

const LOGICAL = new Set(['$and', '$or', '$nor']);
const LIST_OPERATORS = new Set(['$in', '$nin', '$all', '$containedIn', '$containsAll']);
const CROSS_CLASS_QUERY = new Set(['$inQuery', '$notInQuery']);
const CROSS_CLASS_SELECT = new Set(['$select', '$dontSelect']);
/** Operators whose values are search/geo option objects, not further constraints. */
const OPAQUE_VALUE_OPERATORS = new Set([
  '$text',
  '$geoWithin',
  '$within',
  '$geoIntersects',
  '$nearSphere',
  '$near',
]);
const NESTED_QUANTIFIER = /\([^)]*[+*][^)]*\)[+*?]/;

export interface WhereValidationOptions {
  /** Gate for classes named by `$inQuery`, `$select`, `$relatedTo`...; throw to refuse. */
  checkClass?: (className: string) => void;
  /** Cost caps; unset entries use DEFAULT_QUERY_COST_LIMITS. */
  limits?: Partial<QueryCostLimits>;
}

/** One validation pass: the options plus what the where has spent of its cost budget so far. */
interface Walk {
  options: WhereValidationOptions;
  limits: QueryCostLimits;
  subqueries: number;
  clauses: number;
  regexes: number;
}

function overBudget(what: string, limit: number, fix: string): never {
  throw new InvalidQueryError(`where is too costly to run: more than ${limit} ${what}. ${fix}`);
}

/**
 * Validates a `where` an agent sent (or an operator declared): only allowed operators, no code
 * execution, no internal fields at any depth, bounded nesting and regexes, and every class a
 * cross-class operator reaches passes the class gate. Returns the same object when it is acceptable.
 */
export function validateWhere(where: unknown, options: WhereValidationOptions = {}): Where {
  if (where === undefined || where === null) return {};
  if (!isPlainObject(where)) {
    throw new InvalidQueryError('where must be a JSON object of field constraints.');
  }
  const limits = { ...DEFAULT_QUERY_COST_LIMITS, ...options.limits };
  // Size first: a huge where is refused before any walk over it.
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(where), 'utf8');
  } catch {
    throw new InvalidQueryError('where must be plain JSON (no cycles, no BigInt values).');
  }
  if (bytes > limits.maxWhereBytes) {
    overBudget(
      `bytes of JSON (${bytes})`,
      limits.maxWhereBytes,
      'Send a shorter where: fewer clauses or shorter lists, or split the question into several calls.',
    );
  }
  walkConstraints(where, { options, limits, subqueries: 0, clauses: 0, regexes: 0 }, 1);
  return where;
}

function refuseOperator(op: string): never {
  if (CODE_EXECUTION_OPERATORS.has(op)) {
    throw new InvalidQueryError(
      `Operator '${op}' is not allowed: operators that execute code on the database are refused.`,
    );
  }
  throw new InvalidQueryError(
    `Unknown operator '${op}'. Allowed operators: ${[...ALLOWED_OPERATORS].join(', ')}.`,
  );
}

function checkDepth(depth: number): void {
  if (depth > MAX_QUERY_DEPTH) {
    throw new InvalidQueryError(
      `where is nested too deeply (more than ${MAX_QUERY_DEPTH} levels).`,
    );
  }
}

function countSubquery(walk: Walk): void {
  walk.subqueries++;
  if (walk.subqueries > walk.limits.maxSubqueries) {
    overBudget(
      'subqueries ($inQuery, $notInQuery, $select, $dontSelect, $relatedTo)',
      walk.limits.maxSubqueries,
      'Each subquery is a join the database runs; query the inner class first and pass the ids with $in.',
    );
  }
}

function walkConstraints(where: Where, walk: Walk, depth: number): void {
  checkDepth(depth);
  for (const [key, value] of Object.entries(where)) {
    if (key.startsWith('$')) {
      if (LOGICAL.has(key)) {
        if (!Array.isArray(value) || value.some((v) => !isPlainObject(v))) {
          throw new InvalidQueryError(`${key} takes an array of constraint objects.`);
        }
        walk.clauses += value.length;
        if (walk.clauses > walk.limits.maxLogicalClauses) {
          overBudget(
            '$or/$and/$nor clauses in total',
            walk.limits.maxLogicalClauses,
            'Combine equality clauses on one field into a single $in list.',
          );
        }
        for (const clause of value as Where[]) walkConstraints(clause, walk, depth + 1);
      } else if (key === '$relatedTo') {
        countSubquery(walk);
        checkRelatedTo(value, walk.options);
      } else {
        refuseOperator(key);
      }
      continue;
    }
    if (isInternalField(key)) {
      throw new SecurityBlockedError(
        `Field '${key}' is an internal Parse field and cannot be queried: even a filter on it would leak its value through counts.`,
        'denied_internal_field',
      );
    }
    walkFieldValue(key, value, walk, depth + 1);
  }
}

function walkFieldValue(field: string, value: unknown, walk: Walk, depth: number) {
  checkDepth(depth);
  // Typed values (Pointer, Date...) have no `$` keys; any `$` key beside `__type` is still checked.
  if (!isPlainObject(value)) return; // equality
  for (const [op, operand] of Object.entries(value)) {
    if (!op.startsWith('$')) continue; // equality on an embedded object
    if (!ALLOWED_OPERATORS.has(op) || LOGICAL.has(op) || op === '$relatedTo') refuseOperator(op);
    if (LIST_OPERATORS.has(op) && Array.isArray(operand)) {
      if (operand.length > walk.limits.maxListLength) {
        overBudget(
          `entries in the ${op} list on '${field}' (${operand.length})`,
          walk.limits.maxListLength,
          'Split the list over several calls.',
        );
      }
    }
    if (op === '$regex') {
      walk.regexes++;
      if (walk.regexes > walk.limits.maxRegexes) {
        overBudget(
          '$regex constraints',
          walk.limits.maxRegexes,
          'Use equality, $in or a prefix regex on fewer fields.',
        );
      }
      checkRegex(field, operand);
    } else if (op === '$options') checkRegexOptions(operand);
    else if (op === '$within') withinBox(field, operand);
    else if (CROSS_CLASS_QUERY.has(op)) {
      countSubquery(walk);
      checkSubquery(op, operand, walk, depth);
    } else if (CROSS_CLASS_SELECT.has(op)) {
      countSubquery(walk);
      if (
        !isPlainObject(operand) ||
        !isPlainObject(operand.query) ||
        typeof operand.key !== 'string' ||
        Object.keys(operand).some((k) => k !== 'query' && k !== 'key')
      ) {
        throw new InvalidQueryError(`${op} takes { query: { className, where }, key }.`);
      }
      if (isInternalField(operand.key)) {
        throw new SecurityBlockedError(
          `${op} may not select internal field '${operand.key}'.`,
          'denied_internal_field',
        );
      }
      checkSubquery(op, operand.query, walk, depth);
    } else if (op === '$not' || (isPlainObject(operand) && !OPAQUE_VALUE_OPERATORS.has(op))) {
      if (isPlainObject(operand) && Object.keys(operand).some((k) => k.startsWith('$'))) {
        walkFieldValue(field, operand, walk, depth + 1);
      }
    }
  }
}

function checkSubquery(op: string, operand: unknown, walk: Walk, depth: number) {
  if (
    !isPlainObject(operand) ||
    typeof operand.className !== 'string' ||
    Object.keys(operand).some((k) => k !== 'className' && k !== 'where')
  ) {
    throw new InvalidQueryError(`${op} takes { className, where } and nothing else.`);
  }
  walk.options.checkClass?.(operand.className);
  if (operand.where !== undefined) {
    if (!isPlainObject(operand.where))
      throw new InvalidQueryError(`${op}.where must be an object.`);
    walkConstraints(operand.where, walk, depth + 1);
  }
}

function checkRelatedTo(value: unknown, options: WhereValidationOptions) {
  if (!isPlainObject(value) || !isPlainObject(value.object) || typeof value.key !== 'string') {
    throw new InvalidQueryError('$relatedTo takes { object: <Pointer>, key }.');
  }
  const className = value.object.className;
  if (typeof className !== 'string') {
    throw new InvalidQueryError('$relatedTo.object must be a Pointer with a className.');
  }
  options.checkClass?.(className);
}

/** A `$regex` operand is a short string without nested quantifiers (also used for pipelines). */
export function checkRegex(field: string, pattern: unknown): void {
  if (typeof pattern !== 'string')
    throw new InvalidQueryError(`$regex on '${field}' must be a string.`);
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw new SecurityBlockedError(
      `$regex on '${field}' is longer than ${MAX_REGEX_LENGTH} characters.`,
      'regex_too_long',
    );
  }
  if (NESTED_QUANTIFIER.test(pattern)) {
    throw new SecurityBlockedError(
      `$regex on '${field}' has a nested quantifier (catastrophic backtracking risk); simplify the pattern.`,
      'regex_redos',
    );
  }
}

/** A GeoPoint as Parse's query language writes it. */
export interface GeoPointValue {
  __type: 'GeoPoint';
  latitude: number;
  longitude: number;
}

function isGeoPoint(value: unknown): value is GeoPointValue {
  return (
    isPlainObject(value) &&
    value.__type === 'GeoPoint' &&
    typeof value.latitude === 'number' &&
    typeof value.longitude === 'number' &&
    Math.abs(value.latitude) <= 90 &&
    Math.abs(value.longitude) <= 180
  );
}

/**
 * The corners of Parse's `$within: { $box: [southwest, northeast] }` (the SDK's `withinGeoBox`),
 * checked; the only `$within` form Parse Server runs.
 */
export function withinBox(field: string, operand: unknown): [GeoPointValue, GeoPointValue] {
  const box = isPlainObject(operand) ? operand.$box : undefined;
  if (
    !isPlainObject(operand) ||
    Object.keys(operand).length !== 1 ||
    !Array.isArray(box) ||
    box.length !== 2 ||
    !box.every(isGeoPoint)
  ) {
    throw new InvalidQueryError(
      `'${field}': $within takes { "$box": [southwest, northeast] }, two GeoPoints such as {"__type":"GeoPoint","latitude":40.7,"longitude":-74.0} (latitude -90..90, longitude -180..180).`,
    );
  }
  return [box[0], box[1]];
}

function checkRegexOptions(options: unknown) {
  if (typeof options !== 'string' || options.length > 8 || /[^imx]/.test(options)) {
    throw new SecurityBlockedError(
      '$options may only combine the flags i, m and x.',
      'regex_options',
    );
  }
}

/** Root field names a where constrains (first dotted segment), through $and/$or/$nor. */
export function collectWhereFields(where: Where): string[] {
  const out = new Set<string>();
  const visit = (w: Where) => {
    for (const [key, value] of Object.entries(w)) {
      if (LOGICAL.has(key) && Array.isArray(value)) {
        for (const clause of value) if (isPlainObject(clause)) visit(clause);
      } else if (!key.startsWith('$')) {
        out.add(key.split('.')[0]);
      }
    }
  };
  visit(where);
  return [...out];
}

export interface FieldType {
  type: string;
  targetClass?: string;
}

const ISO_DATE =
  /^\d{4}-\d{2}-\d{2}(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/;
const COMPARISON_OPS = ['$eq', '$ne', '$lt', '$lte', '$gt', '$gte'];
const LIST_OPS = ['$in', '$nin', '$all', '$containedIn', '$containsAll'];

/**
 * Rewrites values into the shapes Parse stores: bare objectIds (or "Class$id") compared with a pointer
 * column become Pointer objects; ISO strings compared with a Date column become Parse dates.
 * Returns a new object; the input is left untouched.
 */
export function normalizeWhere(
  where: Where,
  fields: Record<string, FieldType>,
  hidden: (className: string) => boolean = () => false,
): Where {
  const out: Where = {};
  for (const [key, value] of Object.entries(where)) {
    if (LOGICAL.has(key) && Array.isArray(value)) {
      out[key] = value.map((clause) =>
        isPlainObject(clause) ? normalizeWhere(clause, fields, hidden) : clause,
      );
      continue;
    }
    const field = fields[key];
    if (!field || (field.type !== 'Pointer' && field.type !== 'Date')) {
      out[key] = value;
      continue;
    }
    const convert = (v: unknown) => normalizeValue(key, v, field, hidden);
    if (
      isPlainObject(value) &&
      typeof value.__type !== 'string' &&
      Object.keys(value).some((k) => k.startsWith('$'))
    ) {
      const ops: Where = {};
      for (const [op, operand] of Object.entries(value)) {
        if (COMPARISON_OPS.includes(op)) ops[op] = convert(operand);
        else if (LIST_OPS.includes(op) && Array.isArray(operand)) ops[op] = operand.map(convert);
        else ops[op] = operand;
      }
      out[key] = ops;
    } else {
      out[key] = convert(value);
    }
  }
  return out;
}

function normalizeValue(
  field: string,
  value: unknown,
  type: FieldType,
  hidden: (className: string) => boolean,
): unknown {
  if (type.type === 'Pointer' && type.targetClass)
    return pointerValue(field, value, type.targetClass, hidden(type.targetClass));
  if (typeof value !== 'string') return value;
  if (type.type === 'Date') {
    const iso = ISO_DATE.exec(value);
    // A date-time without an offset is read as UTC, never in the server's local zone.
    const time = iso ? Date.parse(iso[2] || !iso[1] ? value : `${value}Z`) : NaN;
    if (Number.isNaN(time)) {
      throw new AgentValidationError(
        `'${field}' is a Date field; "${value}" is not an ISO 8601 date (e.g. 2026-01-31T00:00:00Z).`,
      );
    }
    return { __type: 'Date', iso: new Date(time).toISOString() };
  }
  return value;
}

/**
 * A value compared with a pointer column, as the Pointer Parse stores: a bare objectId, "Class$id",
 * or a Pointer object of the field's class. Anything else (another class, no objectId, a number, an
 * object without `__type: 'Pointer'`) would match nothing, so it is refused with the class expected.
 * null (unset) passes.
 */
function pointerValue(field: string, value: unknown, target: string, hidden: boolean): unknown {
  if (value === null || value === undefined) return value;
  // A class the agent may not see is never named (as get_schema's query_hint does).
  const shown = hidden ? '<targetClass>' : target;
  const refuse = (problem: string): never => {
    throw new PointerShapeError(
      `'${field}' is a pointer to ${hidden ? 'a class this agent cannot read' : target}; ${problem}. Give the objectId ("abc123"), "${shown}$abc123" or {"__type":"Pointer","className":"${shown}","objectId":"abc123"}.`,
      field,
      shown,
    );
  };
  if (typeof value === 'string') {
    const dollar = value.indexOf('$');
    const className = dollar >= 0 ? value.slice(0, dollar) : target;
    const objectId = dollar >= 0 ? value.slice(dollar + 1) : value;
    if (className !== target) refuse(`"${value}" names class ${className || '(none)'}`);
    if (!objectId) refuse(`"${value}" has no objectId`);
    return { __type: 'Pointer', className: target, objectId };
  }
  if (!isPlainObject(value))
    return refuse(`got ${Array.isArray(value) ? 'an array' : typeof value}`);
  if (value.__type !== 'Pointer') return refuse('got an object that is not a Pointer');
  if (value.className !== target) {
    return refuse(`the Pointer names class ${JSON.stringify(value.className ?? null)}`);
  }
  if (typeof value.objectId !== 'string' || !value.objectId) {
    return refuse('the Pointer has no objectId');
  }
  return value;
}

/**
 * Checks a value written to a pointer column: null, `{"__op":"Delete"}` or a Pointer object of the
 * column's class with an objectId. Anything else is refused with the class expected (never named
 * when `hidden`), before Parse answers with a bare schema mismatch.
 */
export function checkPointerWrite(
  field: string,
  value: unknown,
  target: string,
  hidden = false,
): void {
  if (value === null || value === undefined) return;
  if (isPlainObject(value)) {
    if (value.__op === 'Delete') return;
    if (
      value.__type === 'Pointer' &&
      value.className === target &&
      typeof value.objectId === 'string' &&
      value.objectId
    ) {
      return;
    }
  }
  const shown = hidden ? '<targetClass>' : target;
  throw new PointerShapeError(
    `values: '${field}' is a pointer to ${hidden ? 'a class this agent cannot read' : target}; write {"__type":"Pointer","className":"${shown}","objectId":"abc123"} (or null to clear it).`,
    field,
    shown,
  );
}

/** Parse types whose where values have one JSON type, and what to call it in an error. */
const SCALAR_TYPES: Record<string, { jsType: string; noun: string }> = {
  Number: { jsType: 'number', noun: 'a number' },
  String: { jsType: 'string', noun: 'a string' },
  Boolean: { jsType: 'boolean', noun: 'true or false' },
};

/**
 * Checks that values compared with Number, String and Boolean fields have that type, so a where
 * like `{"total":{"$gt":"abc"}}` is refused with the field, the operator and the fix instead of
 * reaching Parse (which answers with an internal error, or silently matches nothing).
 */
export function checkWhereValueTypes(where: Where, fields: Record<string, FieldType>): void {
  for (const [key, value] of Object.entries(where)) {
    if (LOGICAL.has(key) && Array.isArray(value)) {
      for (const clause of value) if (isPlainObject(clause)) checkWhereValueTypes(clause, fields);
      continue;
    }
    const type = fields[key]?.type;
    if (type && type !== 'GeoPoint' && isPlainObject(value) && '$within' in value) {
      throw new InvalidQueryError(
        `where.${key}.$within: '${key}' is a ${type} field; $within filters GeoPoint fields.`,
      );
    }
    const scalar = SCALAR_TYPES[type ?? ''];
    if (!scalar) continue;
    const check = (v: unknown, path: string) => {
      if (v === null || typeof v === scalar.jsType) return;
      throw new InvalidQueryError(
        `${path}: '${key}' is a ${fields[key].type} field, so compare it with ${scalar.noun}; got ${describeValue(v)}.`,
      );
    };
    if (isPlainObject(value) && Object.keys(value).some((k) => k.startsWith('$'))) {
      for (const [op, operand] of Object.entries(value)) {
        if (COMPARISON_OPS.includes(op)) check(operand, `where.${key}.${op}`);
        else if (LIST_OPS.includes(op) && Array.isArray(operand))
          operand.forEach((v, i) => check(v, `where.${key}.${op}[${i}]`));
        else if (op === '$exists' && typeof operand !== 'boolean')
          throw new InvalidQueryError(
            `where.${key}.$exists takes true or false; got ${describeValue(operand)}.`,
          );
      }
    } else {
      check(value, `where.${key}`);
    }
  }
}

function describeValue(v: unknown): string {
  if (typeof v === 'string')
    return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  if (Array.isArray(v)) return 'an array';
  return v === null
    ? 'null'
    : `${typeof v === 'object' ? 'an object' : `the ${typeof v} ${String(v)}`}`;
}
