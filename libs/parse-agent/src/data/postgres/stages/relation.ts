import { AgentValidationError } from '../../../core/errors';
import { columnRef } from '../pg-identifiers';
import { ownField, type PgField } from '../pg-schema';
import type { SqlParams } from '../sql-params';
import type { SqlContext } from '../scoped-source';
import { fieldsHint } from '../where-to-sql';

/** Hidden column carrying row order from a $sort through later stages (subqueries lose ORDER BY). */
export const ORD = '"__ord"';

/** The rows a stage yields: a SQL subquery and the fields its columns hold. */
export interface Relation {
  sql: string;
  fields: Record<string, PgField>;
  ordered: boolean;
  /**
   * The fields may be named in errors: true once a $project, $group or $count has set them. The
   * class's own visible columns are not listed (see WhereFields.listable); the pipeline validator
   * opens every allowlisted class with a $project of what the agent may read.
   */
  listable: boolean;
}

/** A SQL value with the type of what it holds. */
export interface Ref {
  expr: string;
  field: PgField;
}

/** What every stage compiler works with: the query's parameters and the reader's scope. */
export interface StageEnv {
  params: SqlParams;
  ctx: SqlContext;
  /** `$$variables` in scope ($lookup let): values of the outer row. */
  vars: Readonly<Record<string, Ref>>;
  /** Compiles a nested pipeline ($facet, $lookup pipeline) over `rel`. */
  pipeline(stages: unknown, rel: Relation, where: string): Relation;
  /** The same environment with more variables in scope. */
  withVars(vars: Record<string, Ref>): StageEnv;
  /**
   * No later stage (nor the answer) depends on the order of this stage's rows, so a stage may
   * skip numbering them (set per stage by the pipeline compiler).
   */
  orderUnused?: boolean;
}

/** `a."x", a."y"`: the columns of `fields` read from alias `a`. */
export function list(fields: Record<string, PgField>, a: string, extra: string[] = []): string {
  const cols = Object.keys(fields).map((name) => columnRef(name, a));
  const all = [...cols, ...extra];
  return all.length ? all.join(', ') : 'NULL AS "__none"';
}

/** The hidden order column, when the rows carry one. */
export function keepOrd(rel: Relation, a: string): string[] {
  return rel.ordered ? [`${a}.${ORD}`] : [];
}

/** `SELECT <cols> FROM (<rel>) AS a` as a relation with the same order and the given fields. */
export function select(
  rel: Relation,
  a: string,
  cols: string[],
  fields: Record<string, PgField>,
  listable = rel.listable,
): Relation {
  const all = [...cols, ...keepOrd(rel, a)];
  return {
    sql: `SELECT ${all.length ? all.join(', ') : 'NULL AS "__none"'} FROM (${rel.sql}) AS ${a}`,
    fields,
    ordered: rel.ordered,
    listable,
  };
}

/** The field `name` of the rows at this stage, or a refusal naming the stage. */
export function known(name: string, rel: Relation, where: string): PgField {
  const field = ownField(rel.fields, name);
  if (!field) {
    throw new AgentValidationError(
      `${where}: unknown field '${name}': not a field this reader can use at this stage. ` +
        fieldsHint(rel, 'Fields at this stage'),
    );
  }
  return field;
}

export function hasOwn(object: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/** A computed value as a column: a bare null becomes a typed NULL (text) a later stage can test. */
export function asColumn(ref: Ref): Ref {
  return ref.field.type === 'Null' ? { expr: 'NULL::text', field: { type: 'String' } } : ref;
}
