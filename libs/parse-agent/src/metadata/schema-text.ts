import { CLASS_NAME_PATTERN } from '../core/constants';
import { hiddenCharacters } from '../core/hidden-characters';
import type { ParseSchema } from '../core/parse-schema';

/**
 * What schema text may look like by the time a model reads it. Descriptions come from decorators
 * and field names from Parse Server's schema; both reach the model as trusted text (tool results,
 * get_schema, get_all_schemas, describe, prompts, resources, server instructions), so they are
 * cleaned where they enter the library, here and nowhere else:
 *
 * - control, zero-width, bidirectional and tag characters are dropped (newlines and tabs stay);
 * - a class's description and usage, and a method's description, are cut at
 *   `MAX_CLASS_TEXT` characters; a field's description, an allowed value's meaning and a
 *   parameter's description or title at `MAX_FIELD_TEXT`; a cut ends in "…";
 * - a field whose name is not an identifier (`/^[A-Za-z_][A-Za-z0-9_]*$/`), a class whose name is
 *   not a Parse class name, and a method whose name is not an identifier are left out.
 */
export const MAX_CLASS_TEXT = 1000;
export const MAX_FIELD_TEXT = 300;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isIdentifier(name: unknown): name is string {
  return typeof name === 'string' && IDENTIFIER.test(name);
}

/** `text` without hidden characters, cut at `max`; undefined when nothing readable is left. */
export function schemaText(text: unknown, max: number): string | undefined {
  if (typeof text !== 'string') return undefined;
  const clean = text
    .replace(/\r\n?/g, '\n')
    .replace(hiddenCharacters(), (char) => (char === '\n' || char === '\t' ? char : ''))
    .trim();
  if (!clean) return undefined;
  if (clean.length <= max) return clean;
  let end = max - 1;
  if (/[\ud800-\udbff]/.test(clean[end - 1])) end--;
  return `${clean.slice(0, end).trimEnd()}…`;
}

/**
 * A JSON Schema (a method's parameters) with every `description` and `title` cleaned as field
 * text; a new object, the declaration's own is left as it was.
 */
export function schemaWithCleanText<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item: unknown) => schemaWithCleanText(item)) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if ((key === 'description' || key === 'title') && typeof value === 'string') {
      const text = schemaText(value, MAX_FIELD_TEXT);
      if (text !== undefined) out[key] = text;
    } else {
      out[key] = schemaWithCleanText(value);
    }
  }
  return out as T;
}

/**
 * Parse Server's schema as agents may see it: undefined for a class whose name is not a Parse
 * class name; otherwise the fields with identifier names only (a pointer's target must be a class
 * name too), and index names without hidden characters.
 */
export function shownParseSchema(schema: ParseSchema): ParseSchema | undefined {
  if (typeof schema?.className !== 'string' || !CLASS_NAME_PATTERN.test(schema.className)) {
    return undefined;
  }
  let dropped = false;
  const fields: ParseSchema['fields'] = {};
  for (const [name, field] of Object.entries(schema.fields ?? {})) {
    const targetOk = field?.targetClass === undefined || CLASS_NAME_PATTERN.test(field.targetClass);
    if (isIdentifier(name) && targetOk) fields[name] = field;
    else dropped = true;
  }
  let indexes = schema.indexes;
  if (indexes) {
    const kept: NonNullable<ParseSchema['indexes']> = {};
    for (const [name, spec] of Object.entries(indexes)) {
      if (schemaText(name, MAX_FIELD_TEXT) === name) kept[name] = spec;
      else dropped = true;
    }
    indexes = kept;
  }
  // The usual case, nothing to leave out: the schema as Parse gave it.
  return dropped ? { ...schema, fields, ...(indexes ? { indexes } : {}) } : schema;
}
