import { AgentValidationError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';

/** Operators that combine whole clauses: their values are clauses, checked the same way. */
const CLAUSE_LISTS = new Set(['$and', '$or', '$nor']);

/**
 * Checks a semantic_search `where` before anything plans it: every field named, at any depth
 * (inside $and/$or/$nor too), must be one of the class's `filterFields`, and no key may start with
 * an underscore (internal columns, `_rperm`, `_p_` pointers). Operators inside a field's
 * condition are left to the read policy's own validation. The error names the fields accepted.
 */
export function checkSearchWhere(
  where: unknown,
  className: string,
  filterFields: readonly string[],
): Record<string, unknown> | undefined {
  if (where === undefined || where === null) return undefined;
  const accepted = () =>
    filterFields.length
      ? `semantic_search on ${className} filters on ${filterFields.map((f) => `'${f}'`).join(', ')} only`
      : `${className} declares no filter fields (@AgentSearchable filterFields), so semantic_search takes no where`;
  const visit = (clause: unknown, path: string): void => {
    if (!isPlainObject(clause)) {
      throw new AgentValidationError(`where${path}: must be an object of field conditions.`);
    }
    for (const [key, value] of Object.entries(clause)) {
      if (key.startsWith('_')) {
        throw new AgentValidationError(
          `where${path}: '${key}' is refused (keys starting with '_' are internal). ${accepted()}.`,
        );
      }
      if (CLAUSE_LISTS.has(key)) {
        if (!Array.isArray(value) || value.length === 0) {
          throw new AgentValidationError(
            `where${path}.${key}: must be a non-empty list of clauses.`,
          );
        }
        value.forEach((inner, i) => visit(inner, `${path}.${key}[${i}]`));
        continue;
      }
      if (key.startsWith('$')) {
        throw new AgentValidationError(
          `where${path}: '${key}' is not accepted at the top of a clause; use $and, $or or $nor, or a condition on a field. ${accepted()}.`,
        );
      }
      const head = key.split('.')[0];
      if (!filterFields.includes(head)) {
        throw new AgentValidationError(
          `where${path}: '${key}' is not a filter field. ${accepted()}.`,
        );
      }
      refuseUnderscoreKeys(value, `${path}.${key}`, accepted);
    }
  };
  visit(where, '');
  return where as Record<string, unknown>;
}

/** Operators that read another class: semantic_search filters its own class's fields only. */
const OTHER_CLASS_OPERATORS = new Set([
  '$inQuery',
  '$notInQuery',
  '$select',
  '$dontSelect',
  '$relatedTo',
]);

/** No key below a field's condition may start with '_' either (e.g. {$inQuery: {_rperm: ...}}). */
function refuseUnderscoreKeys(value: unknown, path: string, accepted: () => string): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => refuseUnderscoreKeys(v, `${path}[${i}]`, accepted));
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [key, inner] of Object.entries(value)) {
    if (OTHER_CLASS_OPERATORS.has(key)) {
      throw new AgentValidationError(
        `where${path}: '${key}' reads another class, which semantic_search does not take. ${accepted()}.`,
      );
    }
    if (key.startsWith('_')) {
      throw new AgentValidationError(
        `where${path}: '${key}' is refused (keys starting with '_' are internal). ${accepted()}.`,
      );
    }
    refuseUnderscoreKeys(inner, `${path}.${key}`, accepted);
  }
}
