import { ParseAgentConfigError } from '../core/errors';

export interface ListFilter<T> {
  only?: T[];
  except?: T[];
}

/** `['a','b']` (= only) or `{ only, except }`: the shape of tools/classes/methods options. */
export type ListFilterInput<T> = T[] | ListFilter<T>;

export interface NormalizedListFilter {
  only?: Set<string>;
  except: Set<string>;
}

/** Validates and normalizes a list filter option; `name` is the option's name for error messages. */
export function normalizeListFilter<T>(
  input: ListFilterInput<T> | undefined | null,
  name: string,
  toNames: (entry: T) => string[],
): NormalizedListFilter | undefined {
  if (input === undefined || input === null) return undefined;
  let only: T[] | undefined;
  let except: T[] | undefined;
  if (Array.isArray(input)) {
    only = input;
  } else if (typeof input === 'object') {
    const extra = Object.keys(input).filter((k) => k !== 'only' && k !== 'except');
    if (extra.length) {
      throw new ParseAgentConfigError(
        `${name}: unknown key(s) ${extra.join(', ')}; use { only: [...] } and/or { except: [...] }.`,
      );
    }
    only = input.only;
    except = input.except;
    if (only !== undefined && !Array.isArray(only))
      throw new ParseAgentConfigError(`${name}.only must be an array.`);
    if (except !== undefined && !Array.isArray(except))
      throw new ParseAgentConfigError(`${name}.except must be an array.`);
  } else {
    throw new ParseAgentConfigError(`${name} must be an array or { only, except }.`);
  }
  return {
    only: only ? new Set(only.flatMap(toNames)) : undefined,
    except: new Set((except ?? []).flatMap(toNames)),
  };
}

export function passesListFilter(
  filter: NormalizedListFilter | undefined,
  names: string[],
): boolean {
  if (!filter) return true;
  if (names.some((n) => filter.except.has(n))) return false;
  if (filter.only && !names.some((n) => filter.only!.has(n))) return false;
  return true;
}
