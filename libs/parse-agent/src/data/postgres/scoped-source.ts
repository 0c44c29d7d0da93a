import { AccessDeniedError, AgentValidationError } from '../../core/errors';
import { aclClause, type Principals } from './acl-clause';
import { columnRef, quoteIdent } from './pg-identifiers';
import {
  isColumnField,
  ownField,
  withDefaultFields,
  type PgClassSchema,
  type PgField,
} from './pg-schema';
import type { SqlParams } from './sql-params';
import { compileWhere, type Where } from './where-to-sql';

/** The library's scope for one class: the reader's principals and an extra where (tenant, soft-delete). */
export interface ClassScope {
  where?: Where;
  /** Missing means anonymous: only public rows. */
  principals?: Principals;
}

/** Everything a builder needs to read classes safely. */
export interface SqlContext {
  schemas: Readonly<Record<string, PgClassSchema>>;
  scopeFor(className: string): ClassScope;
  /** API field names this reader may see in the class: protected fields already removed. */
  columnsFor(className: string): readonly string[];
}

/** A subquery yielding only the rows the reader may read and only the columns it may see. */
export interface ScopedSource {
  className: string;
  sql: string;
  /** The visible columns (API name -> type). */
  fields: Record<string, PgField>;
}

export function classSchema(className: string, ctx: SqlContext): PgClassSchema {
  const schema = Object.prototype.hasOwnProperty.call(ctx.schemas, className)
    ? ctx.schemas[className]
    : undefined;
  if (!schema) {
    throw new AgentValidationError(
      `Unknown class '${className}'. Check the class name with get_all_schemas.`,
    );
  }
  return withDefaultFields(schema);
}

/**
 * `SELECT <visible columns> FROM "Class" WHERE <row ACL> AND <scope where>`. The scope where is the
 * library's own (it may name protected fields); the agent's where is applied outside, on the
 * visible columns only. PostgreSQL flattens the subquery, so this costs nothing at run time.
 */
export function scopedSource(className: string, ctx: SqlContext, params: SqlParams): ScopedSource {
  const schema = classSchema(className, ctx);
  const allFields: Record<string, PgField> = {};
  for (const [name, field] of Object.entries(schema.fields)) {
    if (isColumnField(field) && !name.startsWith('_')) allFields[name] = field;
  }
  const fields: Record<string, PgField> = {};
  for (const name of ctx.columnsFor(className)) {
    const field = ownField(allFields, name);
    if (field) fields[name] = field;
  }
  const scope = ctx.scopeFor(className) ?? {};
  const alias = params.alias('b');
  const acl = aclClause(scope.principals ?? [], params, alias);
  const scopeWhere = scope.where ? compileWhere(scope.where, schema, params, alias) : 'TRUE';
  const columns = Object.keys(fields).map((name) => columnRef(name, alias));
  const sql =
    `SELECT ${columns.length ? columns.join(', ') : 'NULL AS "__none"'} ` +
    `FROM ${quoteIdent(className)} AS ${alias} WHERE ${acl} AND ${scopeWhere}`;
  return { className, sql, fields };
}

/**
 * The visible field `name` of a source, or a refusal. A protected field and a missing one get the
 * same answer, and no field is listed: this path does not know the agent's allowlist, so naming
 * the visible columns (or which one is protected) could reveal fields the agent may not use.
 */
export function visibleField(source: ScopedSource, name: string, role: string): PgField {
  const field = ownField(source.fields, name);
  if (field) return field;
  throw new AccessDeniedError(
    `${role}: '${name}' is not a field of ${source.className} this reader can use. ` +
      `get_schema lists the fields you can use.`,
    { kind: 'field_denied', deniedField: name },
  );
}
