import { isInternalField } from '../../query/internal-fields';
import { METADATA } from '../metadata.constants';
import type {
  AgentSearchableOptions,
  SearchableChunking,
  SearchableDeclaration,
} from '../metadata.types';
import { decoratorError } from './decorator-errors';

/** Chunking when `chunk` names none: about a paragraph or two per chunk. */
export const DEFAULT_CHUNKING: Readonly<SearchableChunking> = Object.freeze({
  size: 800,
  overlap: 100,
  maxPerDocument: 20,
});

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
type Target = Function;

function names(target: Target, what: string, value: unknown, required: boolean): string[] {
  if (value === undefined && !required) return [];
  if (!Array.isArray(value) || (required && value.length === 0)) {
    throw decoratorError(
      'AgentSearchable',
      target,
      `${what} must be a list of field names${required ? ' (at least one)' : ''}, e.g. ['body'].`,
    );
  }
  for (const name of value) {
    if (typeof name !== 'string' || !NAME.test(name) || isInternalField(name)) {
      throw decoratorError(
        'AgentSearchable',
        target,
        `${what}: ${JSON.stringify(name)} is not a field an agent may use (names start with a letter; internal Parse fields never).`,
      );
    }
  }
  return [...new Set(value as string[])];
}

function chunking(target: Target, chunk: unknown): SearchableChunking {
  if (chunk === undefined) return { ...DEFAULT_CHUNKING };
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
    throw decoratorError(
      'AgentSearchable',
      target,
      'chunk must be an object: { size, overlap, maxPerDocument }.',
    );
  }
  const out = { ...DEFAULT_CHUNKING, ...(chunk as Partial<SearchableChunking>) };
  for (const key of ['size', 'overlap', 'maxPerDocument'] as const) {
    const v = out[key];
    if (!Number.isInteger(v) || v < (key === 'overlap' ? 0 : 1)) {
      throw decoratorError(
        'AgentSearchable',
        target,
        `chunk.${key} must be a whole number${key === 'overlap' ? ' of 0 or more' : ' of 1 or more'}.`,
      );
    }
  }
  if (out.overlap >= out.size) {
    throw decoratorError(
      'AgentSearchable',
      target,
      `chunk.overlap (${out.overlap}) must be smaller than chunk.size (${out.size}).`,
    );
  }
  return out;
}

/**
 * Makes the class searchable by meaning with `semantic_search`: the text `fields` are split into
 * chunks and embedded, and agents may narrow a search with `where` on `filterFields` only. Every
 * search still runs under the agent's ACL, tenant, canonical filter and filters.
 */
export function AgentSearchable(options: AgentSearchableOptions): ClassDecorator {
  return (target) => {
    if (typeof options !== 'object' || options === null) {
      throw decoratorError(
        'AgentSearchable',
        target,
        "pass { fields: ['body'], filterFields?: ['status'], chunk?: { size, overlap, maxPerDocument } }.",
      );
    }
    const unknown = Object.keys(options).filter(
      (k) => !['fields', 'filterFields', 'chunk'].includes(k),
    );
    if (unknown.length) {
      throw decoratorError(
        'AgentSearchable',
        target,
        `unknown option ${unknown.map((k) => `'${k}'`).join(', ')}; it takes fields, filterFields and chunk.`,
      );
    }
    const declared: SearchableDeclaration = {
      fields: names(target, 'fields', options.fields, true),
      filterFields: names(target, 'filterFields', options.filterFields, false),
      chunk: chunking(target, options.chunk),
    };
    Reflect.defineMetadata(METADATA.searchable, Object.freeze(declared), target);
  };
}
