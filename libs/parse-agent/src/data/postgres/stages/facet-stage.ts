import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { assertOutputName, columnRef, quoteIdent } from '../pg-identifiers';
import type { PgField } from '../pg-schema';
import { ExprCompiler } from './expressions';
import { ORD, type Relation, type StageEnv } from './relation';

/**
 * `$facet: { name: [stages], ... }`: each branch runs over the same rows (already scoped), and the
 * stage yields exactly one row whose fields are the branches' rows as arrays, in branch order.
 */
export function facetStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) {
    throw new InvalidQueryError(`$facet takes { name: [stages...], ... }.`);
  }
  const fields: Record<string, PgField> = {};
  const cols: string[] = [];
  for (const [name, stages] of Object.entries(spec)) {
    assertOutputName(name, '$facet');
    if (!Array.isArray(stages))
      throw new InvalidQueryError(`$facet '${name}' must be an array of stages.`);
    const branch = env.pipeline(stages, rel, `$facet '${name}'`);
    const x = env.params.alias('f');
    const exprs = new ExprCompiler(env.params, branch, x, `$facet '${name}'`, env.vars);
    const parts = Object.entries(branch.fields).map(
      ([n, field]) =>
        `${env.params.add(n)}::text, ${exprs.jsonb({ expr: columnRef(n, x), field })}`,
    );
    const doc = parts.length
      ? `jsonb_strip_nulls(jsonb_build_object(${parts.join(', ')}))`
      : `'{}'::jsonb`;
    const order = branch.ordered ? ` ORDER BY ${x}.${ORD}` : '';
    cols.push(
      `(SELECT COALESCE(jsonb_agg(${doc}${order}), '[]'::jsonb) FROM (${branch.sql}) AS ${x}) AS ${quoteIdent(name)}`,
    );
    fields[name] = { type: 'Array' };
  }
  return { sql: `SELECT ${cols.join(', ')}`, fields, ordered: false, listable: true };
}
