/**
 * Checks aggregation expressions and `$match` queries against the forward-pass field tracker. Every
 * field the agent can reach is named either as a `$path` string, a query key, or a constant field name
 * given to `$getField`/`$setField`/`$unsetField`; all three pass through the tracker.
 */
import { DEFAULT_QUERY_COST_LIMITS } from '../../core/constants';
import {
  AccessDeniedError,
  AgentValidationError,
  InvalidQueryError,
  SecurityBlockedError,
} from '../../core/errors';
import { checkRegex } from '../../query/constraint-translator';
import { FieldTracker } from './field-tracker';
import { assertNotInternal } from './pipeline-field-rules';
import { isPlainObject } from '../../core/plain-object';

/** Operators that run server-side JavaScript or write data: refused wherever they appear. */
export const BLOCKED_OPERATORS: ReadonlySet<string> = new Set([
  '$where',
  '$function',
  '$accumulator',
  '$out',
  '$merge',
]);

/** Query operators a `$match` may use at the top level besides field names. */
const LOGICAL_QUERY_OPERATORS = new Set(['$and', '$or', '$nor']);

/**
 * Query-level operators refused because they search or describe fields the agent may not read
 * (`$text` searches every indexed text field, `$jsonSchema` can test any field's presence or shape).
 */
const OPAQUE_QUERY_OPERATORS = new Set(['$text', '$jsonSchema', '$search', '$near', '$nearSphere']);

/** System variables that carry no data the agent could not otherwise read. */
const SAFE_SYSTEM_VARIABLES = new Set([
  'NOW',
  'CLUSTER_TIME',
  'ROOT',
  'CURRENT',
  'REMOVE',
  'DESCEND',
  'PRUNE',
  'KEEP',
]);

/** Mutable facts the walk collects for checks that need the whole pipeline. */
export interface WalkFacts {
  /** `$objectToArray` turns field names into values, so it needs every source to be allowlisted. */
  usesObjectToArray: boolean;
  /** `$or`/`$and`/`$nor` clauses and `$regex` conditions over all `$match` stages so far. */
  matchClauses?: number;
  matchRegexes?: number;
}

/** The where cost caps, applied to `$match` stages too (a pipeline is no way around them). */
function overBudget(what: string, limit: number, fix: string): never {
  throw new InvalidQueryError(`$match is too costly to run: more than ${limit} ${what}. ${fix}`);
}

export function assertNotBlocked(op: string): void {
  if (!BLOCKED_OPERATORS.has(op)) return;
  const why =
    op === '$out' || op === '$merge'
      ? 'writes to a collection; agent pipelines are read-only'
      : 'runs server-side JavaScript';
  throw new SecurityBlockedError(
    `'${op}' ${why} and is refused at any depth of a pipeline. Remove it; use the built-in ` +
      `aggregation operators instead.`,
    op === '$out' || op === '$merge' ? 'write_stage' : 'server_side_js',
  );
}

/** Validates one aggregation expression (the value side of $project, $group, $addFields, $expr...). */
export function validateExpression(expr: unknown, fields: FieldTracker, facts: WalkFacts): void {
  if (typeof expr === 'string') {
    validateStringOperand(expr, fields);
    return;
  }
  if (Array.isArray(expr)) {
    for (const item of expr) validateExpression(item, fields, facts);
    return;
  }
  if (!isObject(expr)) return;
  const keys = Object.keys(expr);
  const operators = keys.filter((k) => k.startsWith('$'));
  if (operators.length === 0) {
    // An object literal: keys are output names, values are expressions.
    for (const key of keys) {
      assertNotInternal(key);
      validateExpression(expr[key], fields, facts);
    }
    return;
  }
  if (operators.length !== keys.length || operators.length > 1) {
    throw new AgentValidationError(
      `An expression object must have exactly one '$operator' key; got {${keys.join(', ')}}. ` +
        `Wrap field/value pairs in an object literal without '$' keys, or split the operators.`,
    );
  }
  const op = operators[0];
  const arg = expr[op];
  assertNotBlocked(op);
  switch (op) {
    case '$literal':
      return; // constant: '$x' inside is a string, not a field reference
    case '$getField':
      validateFieldByName(arg, fields, facts, 'input');
      return;
    case '$setField':
    case '$unsetField':
      validateFieldByName(arg, fields, facts, 'input');
      if (isObject(arg) && 'value' in arg) validateExpression(arg.value, fields, facts);
      return;
    case '$objectToArray':
      facts.usesObjectToArray = true;
      validateExpression(arg, fields, facts);
      return;
    default:
      validateExpression(arg, fields, facts);
  }
}

/** `$getField` / `$setField` / `$unsetField`: the field name must be a constant the tracker can check. */
function validateFieldByName(
  arg: unknown,
  fields: FieldTracker,
  facts: WalkFacts,
  inputKey: string,
): void {
  const spec = typeof arg === 'string' ? { field: arg } : arg;
  if (!isObject(spec)) {
    throw new AgentValidationError(
      `'$getField'/'$setField' need { field: "<name>", input?: <expression> } or a field name string.`,
    );
  }
  let name = spec.field;
  if (isObject(name) && '$literal' in name) name = name.$literal;
  if (typeof name !== 'string') {
    throw new AgentValidationError(
      `'$getField'/'$setField'/'$unsetField' need a constant string 'field'; computed field names are ` +
        `refused because they could reach any column. Name the field directly.`,
    );
  }
  const input = spec[inputKey];
  const onCurrentDocument = input === undefined || input === '$$CURRENT' || input === '$$ROOT';
  if (name.includes('.') || name.startsWith('$')) {
    throw new AgentValidationError(
      `'$getField'/'$setField'/'$unsetField' field names may not contain '.' or start with '$' in ` +
        `agent pipelines ('${name}'). Use a '$path' reference for nested fields.`,
    );
  }
  if (onCurrentDocument) {
    fields.assertReadable(name, false);
  } else {
    assertNotInternal(name);
    validateExpression(input, fields, facts);
  }
}

function validateStringOperand(value: string, fields: FieldTracker): void {
  if (value.startsWith('$$')) {
    const body = value.slice(2);
    const dot = body.indexOf('.');
    const name = dot === -1 ? body : body.slice(0, dot);
    const rest = dot === -1 ? '' : body.slice(dot + 1);
    const isSystem = /^[A-Z]/.test(name);
    if (isSystem && !SAFE_SYSTEM_VARIABLES.has(name)) {
      throw new AgentValidationError(
        `System variable '$$${name}' is not available to agent pipelines. ` +
          `Use $$NOW, $$ROOT, $$CURRENT or your own $let/$map variables.`,
      );
    }
    if (!rest) return;
    if (name === 'ROOT' || name === 'CURRENT') fields.assertReadable(rest, true);
    else assertNotInternal(rest, value);
    return;
  }
  if (value.startsWith('$')) fields.assertReadable(value.slice(1), true);
}

/** Validates a `$match` query document (query language, not expression language). */
export function validateMatchQuery(query: unknown, fields: FieldTracker, facts: WalkFacts): void {
  if (!isObject(query)) {
    throw new AgentValidationError(`'$match' takes a query object, e.g. { "status": "paid" }.`);
  }
  for (const [key, value] of Object.entries(query)) {
    if (key.startsWith('$')) {
      assertNotBlocked(key);
      if (LOGICAL_QUERY_OPERATORS.has(key)) {
        if (!Array.isArray(value) || value.length === 0) {
          throw new AgentValidationError(`'${key}' takes a non-empty array of query objects.`);
        }
        facts.matchClauses = (facts.matchClauses ?? 0) + value.length;
        if (facts.matchClauses > DEFAULT_QUERY_COST_LIMITS.maxLogicalClauses) {
          overBudget(
            '$or/$and/$nor clauses in total',
            DEFAULT_QUERY_COST_LIMITS.maxLogicalClauses,
            'Combine equality clauses on one field into a single $in list.',
          );
        }
        for (const clause of value) validateMatchQuery(clause, fields, facts);
      } else if (key === '$expr') {
        validateExpression(value, fields, facts);
      } else if (key === '$comment' || key === '$sampleRate') {
        // harmless
      } else if (OPAQUE_QUERY_OPERATORS.has(key)) {
        throw new AccessDeniedError(
          `'${key}' is refused in agent pipelines: it can test fields the agent may not read. ` +
            `Filter on named fields instead.`,
          { kind: 'field_denied', deniedField: key },
        );
      } else {
        throw new AgentValidationError(
          `Unknown top-level query operator '${key}' in $match. Use field conditions, $and, $or, $nor or $expr.`,
        );
      }
      continue;
    }
    fields.assertReadable(key, false);
    validateConditionValue(value, key, facts);
  }
}

/**
 * The value side of `field: condition`. Values are literals, except `$elemMatch` sub-queries whose
 * keys name sub-fields: those must not be internal names.
 */
function validateConditionValue(value: unknown, path: string, facts: WalkFacts): void {
  if (Array.isArray(value)) {
    if (value.length > DEFAULT_QUERY_COST_LIMITS.maxListLength) {
      overBudget(
        `list entries on '${path}' (${value.length})`,
        DEFAULT_QUERY_COST_LIMITS.maxListLength,
        'Split the list over several calls.',
      );
    }
    for (const v of value) validateConditionValue(v, path, facts);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, inner] of Object.entries(value)) {
    if (key.startsWith('$')) assertNotBlocked(key);
    else assertNotInternal(key, `${path}.${key}`);
    if (key === '$regex') {
      facts.matchRegexes = (facts.matchRegexes ?? 0) + 1;
      if (facts.matchRegexes > DEFAULT_QUERY_COST_LIMITS.maxRegexes) {
        overBudget(
          '$regex conditions',
          DEFAULT_QUERY_COST_LIMITS.maxRegexes,
          'Use equality, $in or a prefix regex on fewer fields.',
        );
      }
      checkRegex(path, inner);
    }
    validateConditionValue(inner, path, facts);
  }
}

/** An object the validator walks into: any non-array object but a Date (a value, not fields). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && !(value instanceof Date);
}
