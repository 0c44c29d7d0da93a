import type { SqlQuery } from './sql-params';

/**
 * Parse field types as `_SCHEMA` stores them, plus `Json`: a jsonb value produced inside a query
 * ($unwind elements, $lookup documents) whose shape the schema does not describe.
 */
export type PgFieldType =
  | 'String'
  | 'Number'
  | 'Boolean'
  | 'Date'
  | 'Pointer'
  | 'Relation'
  | 'Object'
  | 'Array'
  | 'File'
  | 'GeoPoint'
  | 'Polygon'
  | 'Bytes'
  | 'ACL'
  | 'Json';

export interface PgField {
  type: PgFieldType | string;
  targetClass?: string;
  /** A document a stage built with these keys in this order (a $group _id): sorted key by key. */
  keys?: readonly string[];
  /**
   * A Number a stage holds as a bigint column (a window's rank or row number), not a float8:
   * expressions read it as float8, the answer gets it as float8, and a $match compares it with an
   * integer as bigint, which lets PostgreSQL stop numbering a partition once the test fails.
   */
  bigint?: boolean;
}

/** Parse field name -> type. On PostgreSQL each field is a column of the same name. */
export interface PgClassSchema {
  className: string;
  fields: Record<string, PgField>;
}

/** Fields every Parse class has, whether or not the schema at hand lists them. */
export const DEFAULT_FIELDS: Readonly<Record<string, PgField>> = {
  objectId: { type: 'String' },
  createdAt: { type: 'Date' },
  updatedAt: { type: 'Date' },
};

/** Fields with no column (Relation: a `_Join` table) or never exposed (ACL: `_rperm`/`_wperm`). */
const NOT_A_COLUMN = new Set(['Relation', 'ACL']);

export function isColumnField(field: PgField | undefined): field is PgField {
  return !!field && !NOT_A_COLUMN.has(field.type);
}

/** The schema's own field, or undefined: never an inherited property such as `constructor`. */
export function ownField(fields: Record<string, PgField>, name: string): PgField | undefined {
  return Object.prototype.hasOwnProperty.call(fields, name) ? fields[name] : undefined;
}

/** The schema with Parse's default fields filled in. */
export function withDefaultFields(schema: PgClassSchema): PgClassSchema {
  return { className: schema.className, fields: { ...DEFAULT_FIELDS, ...schema.fields } };
}

/** Reads class schemas from Parse's `_SCHEMA` table (fields and classLevelPermissions). */
export function schemaRowsQuery(classNames?: readonly string[]): SqlQuery {
  if (!classNames) return { text: 'SELECT "className", "schema" FROM "_SCHEMA"', values: [] };
  return {
    text: 'SELECT "className", "schema" FROM "_SCHEMA" WHERE "className" = ANY($1::text[])',
    values: [[...classNames]],
  };
}

export interface PgSchemaRow {
  className: string;
  schema: {
    fields?: Record<string, PgField>;
    classLevelPermissions?: { protectedFields?: Record<string, string[]> } & Record<
      string,
      unknown
    >;
  };
}

/** A `_SCHEMA` row as a class schema plus its protectedFields map (`{ '*': [...], 'role:x': [] }`). */
export function schemaFromRow(row: PgSchemaRow): {
  schema: PgClassSchema;
  protectedFields: Record<string, string[]>;
} {
  const fields: Record<string, PgField> = {};
  for (const [name, field] of Object.entries(row.schema.fields ?? {})) {
    if (name.startsWith('_')) continue; // storage internals (_rperm, _wperm, _hashed_password)
    fields[name] = field.targetClass
      ? { type: field.type, targetClass: field.targetClass }
      : { type: field.type };
  }
  return {
    schema: withDefaultFields({ className: row.className, fields }),
    protectedFields: { ...(row.schema.classLevelPermissions?.protectedFields ?? {}) },
  };
}
