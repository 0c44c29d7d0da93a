import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { assertOutputName, quoteIdent } from '../pg-identifiers';
import type { SqlParams } from '../sql-params';
import { compileWhere } from '../where-to-sql';
import { ExprCompiler, jsonRank } from './expressions';
import { keepOrd, list, ORD, type Ref, type Relation, type StageEnv } from './relation';

/** `$match`, `$sort`, `$limit`, `$skip` and `$count`. */

export function matchStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  const a = env.params.alias('s');
  let cond: string;
  if (isPlainObject(spec) && '$expr' in spec) {
    const { $expr: expr, ...rest } = spec;
    const test = new ExprCompiler(env.params, rel, a, '$match $expr', env.vars);
    cond = `(${compileWhere(rest, rel, env.params, a)} AND ${test.truthy(test.compile(expr))})`;
  } else {
    cond = compileWhere(spec, rel, env.params, a);
  }
  return {
    sql: `SELECT ${list(rel.fields, a, keepOrd(rel, a))} FROM (${rel.sql}) AS ${a} WHERE ${cond}`,
    fields: rel.fields,
    ordered: rel.ordered,
    listable: rel.listable,
  };
}

/**
 * An ORDER BY term in MongoDB's order: missing first ascending, strings by code point, values of
 * different types in BSON type order, a document a stage built (a $group _id) key by key.
 */
export function orderTerm(ref: Ref, dir: 1 | -1, params?: SqlParams): string {
  const nulls = dir === 1 ? 'ASC NULLS FIRST' : 'DESC NULLS LAST';
  const { type, keys } = ref.field;
  if (keys && keys.length && params) {
    return keys
      .map((k) =>
        orderTerm(
          { expr: `(${ref.expr} -> ${params.add(k)}::text)`, field: { type: 'Json' } },
          dir,
        ),
      )
      .join(', ');
  }
  if (type === 'GeoPoint' || type === 'Polygon') {
    throw new InvalidQueryError(`$sort: ${type} fields are not sortable.`);
  }
  if (type === 'String' || type === 'Pointer' || type === 'File') {
    return `${ref.expr} COLLATE "C" ${nulls}`;
  }
  if (type === 'Json' || type === 'Array' || type === 'Object') {
    return `${jsonRank(ref.expr)} ${nulls}, ${ref.expr} ${nulls}`;
  }
  return `${ref.expr} ${nulls}`;
}

/** `{ field: 1 | -1, ... }` as ORDER BY terms over alias `a`. */
export function sortTerms(
  env: StageEnv,
  spec: unknown,
  rel: Relation,
  a: string,
  where: string,
): string[] {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) {
    throw new InvalidQueryError(`${where} takes an object of { field: 1 | -1 }.`);
  }
  const exprs = new ExprCompiler(env.params, rel, a, where, env.vars);
  return Object.entries(spec).map(([path, dir]) => {
    if (dir !== 1 && dir !== -1) throw new InvalidQueryError(`${where} '${path}': use 1 or -1.`);
    return orderTerm(exprs.fieldRef(`$${path}`), dir, env.params);
  });
}

export function sortStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  const a = env.params.alias('s');
  const terms = sortTerms(env, spec, rel, a, '$sort');
  // Ties keep the order they came in, as MongoDB's sort does for equal keys here.
  if (rel.ordered) terms.push(`${a}.${ORD}`);
  return {
    sql:
      `SELECT ${list(rel.fields, a)}, row_number() OVER (ORDER BY ${terms.join(', ')}) AS ${ORD} ` +
      `FROM (${rel.sql}) AS ${a}`,
    fields: rel.fields,
    ordered: true,
    listable: rel.listable,
  };
}

export function limitSkipStage(
  env: StageEnv,
  spec: unknown,
  rel: Relation,
  clause: 'LIMIT' | 'OFFSET',
): Relation {
  const a = env.params.alias('s');
  const n = env.params.addCount(spec, clause === 'LIMIT' ? '$limit' : '$skip', {
    min: clause === 'LIMIT' ? 1 : 0,
  });
  const order = rel.ordered ? ` ORDER BY ${a}.${ORD}` : '';
  return {
    sql: `SELECT ${list(rel.fields, a, keepOrd(rel, a))} FROM (${rel.sql}) AS ${a}${order} ${clause} ${n}`,
    fields: rel.fields,
    ordered: rel.ordered,
    listable: rel.listable,
  };
}

export function countStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  const name = assertOutputName(spec, '$count');
  const a = env.params.alias('s');
  return {
    sql: `SELECT count(*)::float8 AS ${quoteIdent(name)} FROM (${rel.sql}) AS ${a} HAVING count(*) > 0`,
    fields: { [name]: { type: 'Number' } },
    ordered: false,
    listable: true,
  };
}
