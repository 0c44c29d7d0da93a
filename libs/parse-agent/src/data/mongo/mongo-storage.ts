/**
 * Parse-on-Mongo storage shapes, both ways. Agents write and read API names (`objectId`,
 * `createdAt`, `author` holding an objectId); documents are stored as `_id`, `_created_at`,
 * `_p_author: "_User$id"`, `_rperm`... Every class source opens with: the ACL match (storage), any
 * filters that translate exactly (storage, so indexes apply), then a view stage that presents the
 * document in API names with internal and protected fields left out. What follows runs on API names.
 */
import { isInternalField } from '../../query/internal-fields';
import type { MongoDoc } from './mongo-driver';
import type { Principals } from './mongo-principals';
import type { MongoClassSchema } from './mongo-schema';

/** Rows readable by the principals; a document without `_rperm` is public, as Parse treats it. */
export function aclMatchStage(principals: Principals): MongoDoc {
  return {
    $match: { $or: [{ _rperm: { $in: [...principals.names] } }, { _rperm: { $exists: false } }] },
  };
}

const STORAGE_NAMES: Readonly<Record<string, string>> = {
  objectId: '_id',
  createdAt: '_created_at',
  updatedAt: '_updated_at',
};

/**
 * The view stage: an inclusion `$project` of the schema's readable fields under their API names.
 * Inclusion (not exclusion) means a column the schema does not declare, an internal column
 * (`_hashed_password`, `_auth_data_*`, `_rperm`) or a protected field can never pass it.
 */
export function storageViewStage(schema: MongoClassSchema, hidden: ReadonlySet<string>): MongoDoc {
  const project: MongoDoc = { _id: 0, objectId: '$_id' };
  if (!hidden.has('createdAt')) project.createdAt = '$_created_at';
  if (!hidden.has('updatedAt')) project.updatedAt = '$_updated_at';
  for (const [name, field] of Object.entries(schema.fields)) {
    if (name in STORAGE_NAMES || hidden.has(name) || isInternalField(name)) continue;
    if (field.type === 'Relation' || field.type === 'ACL') continue;
    if (field.type === 'Pointer') {
      const column = `$_p_${name}`;
      // "Class$id" -> "id"; a missing or malformed value yields no field (index 1 of [""] is missing).
      project[name] = {
        $arrayElemAt: [
          {
            $split: [
              { $cond: [{ $eq: [{ $type: column }, 'string'] }, column, ''] },
              { $literal: '$' },
            ],
          },
          1,
        ],
      };
    } else {
      project[name] = 1;
    }
  }
  return { $project: project };
}

/** Parse's typed JSON (`{ __type: 'Date' }`, pointers, EJSON dates) as the view's plain values. */
export function apiValue(value: unknown, isDateField = false): unknown {
  if (Array.isArray(value)) return value.map((v) => apiValue(v, isDateField));
  if (typeof value === 'string' && isDateField && ISO_DATE.test(value)) {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? value : d;
  }
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  const v = value as Record<string, unknown>;
  if (v.__type === 'Date' && typeof v.iso === 'string') return new Date(v.iso);
  if (v.__type === 'Pointer' && typeof v.objectId === 'string') return v.objectId;
  if (typeof v.$date === 'string' && Object.keys(v).length === 1) return new Date(v.$date);
  const out: Record<string, unknown> = {};
  for (const [k, inner] of Object.entries(v)) out[k] = apiValue(inner, isDateField);
  return out;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A match in API names and values (as the view presents documents), with typed values made plain:
 * dates as Date (ISO strings too, for fields the schema types as Date), pointers as bare objectIds.
 */
export function apiMatch(where: MongoDoc, schema?: MongoClassSchema): MongoDoc {
  const out: MongoDoc = {};
  for (const [key, value] of Object.entries(where)) {
    if ((key === '$and' || key === '$or' || key === '$nor') && Array.isArray(value)) {
      out[key] = value.map((w) => apiMatch(w as MongoDoc, schema));
    } else {
      out[key] = apiValue(value, schema?.fields[key]?.type === 'Date');
    }
  }
  return out;
}

const EXACT_OPERATORS = new Set([
  '$eq',
  '$ne',
  '$in',
  '$nin',
  '$exists',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
]);

/**
 * The same match in storage names, or undefined when some part has no exact storage equivalent (it
 * then runs after the view, on API names: same rows, no index). Input is an API-shaped match.
 */
export function storageMatch(where: MongoDoc, schema: MongoClassSchema): MongoDoc | undefined {
  const out: MongoDoc = {};
  for (const [key, value] of Object.entries(where)) {
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(value)) return undefined;
      const parts = value.map((w) =>
        typeof w === 'object' && w !== null ? storageMatch(w as MongoDoc, schema) : undefined,
      );
      if (parts.some((p) => p === undefined)) return undefined;
      out[key] = parts;
      continue;
    }
    if (key.startsWith('$')) return undefined;
    const root = key.split('.')[0];
    const field = schema.fields[root];
    if (!field || isInternalField(root)) return undefined;
    if (key.includes('.') && (field.type === 'Pointer' || root in STORAGE_NAMES)) return undefined;
    const translated = storageValue(
      value,
      field.type === 'Pointer' ? field.targetClass : undefined,
    );
    if (translated === undefined) return undefined;
    const name = STORAGE_NAMES[root] ?? (field.type === 'Pointer' ? `_p_${root}` : key);
    out[key.includes('.') ? key : name] = translated;
  }
  return out;
}

function storageValue(value: unknown, pointerClass: string | undefined): unknown {
  const scalar = (v: unknown): unknown => {
    if (pointerClass === undefined) return v;
    if (v === null) return null;
    return typeof v === 'string' ? `${pointerClass}$${v}` : undefined;
  };
  if (typeof value !== 'object' || value === null || value instanceof Date) return scalar(value);
  if (Array.isArray(value)) return pointerClass === undefined ? value : undefined;
  const ops = Object.entries(value as Record<string, unknown>);
  if (!ops.length || ops.some(([op]) => !EXACT_OPERATORS.has(op))) return undefined;
  const out: Record<string, unknown> = {};
  for (const [op, arg] of ops) {
    if (op === '$exists') out[op] = arg;
    else if (op === '$in' || op === '$nin') {
      if (!Array.isArray(arg)) return undefined;
      const mapped = arg.map(scalar);
      if (mapped.some((m) => m === undefined)) return undefined;
      out[op] = mapped;
    } else {
      if (pointerClass !== undefined && op !== '$eq' && op !== '$ne') return undefined;
      const mapped = scalar(arg);
      if (mapped === undefined) return undefined;
      out[op] = mapped;
    }
  }
  return out;
}

/** Parse's collection for a class (with the server's `collectionPrefix`, if it uses one). */
export function collectionNamer(prefix = ''): (className: string) => string {
  return (className) => `${prefix}${className}`;
}
