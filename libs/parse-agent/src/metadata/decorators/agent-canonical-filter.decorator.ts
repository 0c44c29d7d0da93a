import { ParseAgentError } from '../../core/errors';
import { validateWhere, type Where } from '../../query/constraint-translator';
import { isPlainObject } from '../../core/plain-object';
import { METADATA } from '../metadata.constants';
import { decoratorError } from './decorator-errors';

/**
 * A constraint ANDed into every agent query on the class (e.g. hide soft-deleted rows). Validated
 * like agent input: no code-executing operators, no internal fields, known operators only.
 */
export function AgentCanonicalFilter(where: Where): ClassDecorator {
  return (target) => {
    if (!isPlainObject(where) || !Object.keys(where).length) {
      throw decoratorError(
        'AgentCanonicalFilter',
        target,
        'pass a non-empty where object, e.g. { isDeleted: { $ne: true } }.',
      );
    }
    try {
      validateWhere(where);
    } catch (error) {
      if (error instanceof ParseAgentError) {
        throw decoratorError('AgentCanonicalFilter', target, `${error.message} Fix the filter.`);
      }
      throw error;
    }
    Reflect.defineMetadata(METADATA.canonicalFilter, Object.freeze(structuredClone(where)), target);
  };
}
