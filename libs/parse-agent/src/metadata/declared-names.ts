/**
 * Field names a model declares, matched to the columns of the class on the server. A model may name
 * a field by its property (`org`, mapped with `@AgentField({ field: 'org_ref' })` or
 * `@BelongsTo(..., { field })`) or by its column; the registry maps properties to columns when it
 * compiles the model. What is left is matched here against the server's schema: a name that is a
 * column stays, a name whose other spelling (snake_case / camelCase) is exactly one column becomes
 * that column, and any other name is reported, so that nothing built on it (an allowlist entry, the
 * tenant field, a canonical filter) silently matches no row.
 */
import { ALWAYS_KEEP_FIELDS } from '../core/constants';
import type { Where } from '../query/constraint-translator';
import { toCamelCase } from '../query/field-names';
import { isPlainObject } from '../core/plain-object';
import type { ClassMetadata } from './metadata.types';

/** Which declaration named a field. */
export type DeclaredIn =
  | '@AgentFields'
  | '@AgentJoinFields'
  | '@AgentLargeFields'
  | '@AgentTenantScope'
  | '@AgentCanonicalFilter'
  | '@AgentField'
  | '@BelongsTo';

/** A declared name that matches no column of the class. */
export interface UnresolvedName {
  name: string;
  declaredIn: DeclaredIn;
  /** Columns the name could mean, when its other spelling matches more than one. */
  candidates?: string[];
}

/** A model's metadata with every declared name as the column it means. */
export interface ResolvedClassNames {
  /** The metadata in column names; unresolved names are left out of the field lists. */
  meta: ClassMetadata;
  /** Declared names read as another column (the other spelling of the name). */
  mapped: Record<string, string>;
  unresolved: UnresolvedName[];
}

const BUILTIN = new Set<string>(ALWAYS_KEEP_FIELDS);

/**
 * The column a name means among `columns`: itself, or the one column spelled the other way
 * (`org_ref` for `orgRef`, `createdBy` for `created_by`). `candidates` lists them when several are.
 */
export function columnFor(
  name: string,
  columns: ReadonlySet<string>,
): { column?: string; candidates?: string[] } {
  if (columns.has(name) || BUILTIN.has(name)) return { column: name };
  const key = spellingKey(name);
  const matches = [...columns].filter((c) => spellingKey(c) === key);
  if (matches.length === 1) return { column: matches[0] };
  return matches.length ? { candidates: matches.sort() } : {};
}

/** snake_case and camelCase spellings of a name compare equal. */
function spellingKey(name: string): string {
  return toCamelCase(name.replace(/^_+/, '')).toLowerCase();
}

/**
 * Matches the names `meta` declares with the columns of its class. `columns` are the field names
 * of the class's server schema.
 */
export function resolveDeclaredNames(
  meta: ClassMetadata,
  columns: Iterable<string>,
): ResolvedClassNames {
  const known = new Set(columns);
  const mapped: Record<string, string> = {};
  const unresolved: UnresolvedName[] = [];
  const seen = new Set<string>();
  const resolve = (name: string, declaredIn: DeclaredIn): string | undefined => {
    const { column, candidates } = columnFor(name, known);
    if (column !== undefined) {
      if (column !== name) mapped[name] = column;
      return column;
    }
    const id = `${declaredIn}|${name}`;
    if (!seen.has(id)) {
      seen.add(id);
      unresolved.push({ name, declaredIn, ...(candidates ? { candidates } : {}) });
    }
    return undefined;
  };
  const list = (names: readonly string[] | undefined, declaredIn: DeclaredIn) => {
    if (!names) return undefined;
    const out: string[] = [];
    for (const name of names) {
      const column = resolve(name, declaredIn);
      if (column !== undefined && !out.includes(column)) out.push(column);
    }
    return out;
  };

  const fields = list(meta.fields, '@AgentFields');
  const joinFields = list(meta.joinFields, '@AgentJoinFields');
  const largeFields = list(meta.largeFields, '@AgentLargeFields') ?? [];
  const fieldDocs: ClassMetadata['fieldDocs'] = {};
  for (const [field, doc] of Object.entries(meta.fieldDocs)) {
    const column = resolve(field, '@AgentField');
    fieldDocs[column ?? field] = column === undefined ? doc : { ...doc, field: column };
  }
  const propertyToWire: Record<string, string> = {};
  for (const [property, field] of Object.entries(meta.propertyToWire)) {
    propertyToWire[property] = columnFor(field, known).column ?? field;
  }
  const references: Record<string, string> = {};
  for (const field of Object.keys(meta.references)) {
    const column = resolve(field, '@BelongsTo') ?? field;
    // The target resolves lazily (a model declared later in the file), so the getter is kept.
    Object.defineProperty(references, column, {
      enumerable: true,
      configurable: true,
      get: () => meta.references[field],
    });
  }
  let tenantScope = meta.tenantScope;
  if (tenantScope) {
    const column = resolve(tenantScope.field, '@AgentTenantScope');
    if (column !== undefined && column !== tenantScope.field) {
      tenantScope = { ...tenantScope, field: column };
    }
  }
  const canonicalFilter = meta.canonicalFilter
    ? renameWhereFields(meta.canonicalFilter, (name) => resolve(name, '@AgentCanonicalFilter'))
    : undefined;

  return {
    meta: {
      ...meta,
      fields,
      joinFields,
      largeFields,
      fieldDocs,
      propertyToWire,
      references,
      tenantScope,
      canonicalFilter,
    },
    mapped,
    unresolved,
  };
}

/**
 * A copy of a where with each field's top name passed through `rename` (through `$and`, `$or`,
 * `$nor`); a name `rename` cannot map (undefined) is kept as it is.
 */
export function renameWhereFields(
  where: Where,
  rename: (name: string) => string | undefined,
): Where {
  const out: Where = {};
  for (const [key, value] of Object.entries(where)) {
    if ((key === '$and' || key === '$or' || key === '$nor') && Array.isArray(value)) {
      out[key] = value.map((clause) =>
        isPlainObject(clause) ? renameWhereFields(clause, rename) : clause,
      );
    } else if (key.startsWith('$')) {
      out[key] = value;
    } else {
      const [head, ...rest] = key.split('.');
      const column = rename(head) ?? head;
      out[[column, ...rest].join('.')] = value;
    }
  }
  return out;
}
