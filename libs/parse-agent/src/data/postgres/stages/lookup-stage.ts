import { AgentValidationError, InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { assertOutputName, columnRef, quoteIdent } from '../pg-identifiers';
import { ownField } from '../pg-schema';
import { scopedSource } from '../scoped-source';
import { compileWhere } from '../where-to-sql';
import { ExprCompiler } from './expressions';
import { keepOrd, known, list, ORD, type Ref, type Relation, type StageEnv } from './relation';

/**
 * `$lookup` along a pointer: the joined class is a scoped source (row ACL, CLP, the scope's where,
 * visible columns only) and the validator's scope stages for it are applied before any row joins.
 */
export function lookupStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  if (isPlainObject(spec) && Array.isArray(spec.pipeline) && !isPointerJoin(spec)) {
    return lookupPipeline(env, spec, rel);
  }
  const join = lookupJoin(spec);
  const { from, localField, foreignField } = join;
  const as = assertOutputName(join.as, '$lookup as');
  const local = known(localField, rel, '$lookup localField');
  if (
    local.type !== 'Pointer' ||
    local.targetClass !== from ||
    (foreignField !== 'objectId' && foreignField !== '_id')
  ) {
    throw new InvalidQueryError(
      `$lookup follows a pointer: localField must be a Pointer to '${from}' and foreignField 'objectId'.`,
    );
  }
  const joined = scopedSource(from, env.ctx, env.params);
  if (!ownField(joined.fields, 'objectId')) {
    throw new AgentValidationError(`$lookup: objectId of ${from} is not visible to this reader.`);
  }
  const l = env.params.alias('l');
  // The validator's scope stages for the joined class (tenant, filters) and its projection.
  const conds = join.matches.map((where) => compileWhere(where, joined, env.params, l));
  let docFields = joined.fields;
  if (join.project) {
    docFields = {};
    for (const [name, v] of Object.entries(join.project)) {
      if (v !== 1 && v !== true) {
        throw new InvalidQueryError(`$lookup pipeline: only an inclusion $project is supported.`);
      }
      const field = ownField(joined.fields, name);
      if (field) docFields[name] = field;
    }
  }
  const a = env.params.alias('s');
  const d = env.params.alias('d');
  // Each joined row as a document: dates as ISO strings, missing fields left out.
  const json = new ExprCompiler(env.params, { ...rel, fields: docFields }, l, '$lookup');
  const docParts = Object.entries(docFields).map(
    ([n, field]) => `${env.params.add(n)}::text, ${json.jsonb({ expr: columnRef(n, l), field })}`,
  );
  const doc = docParts.length
    ? `jsonb_strip_nulls(jsonb_build_object(${docParts.join(', ')}))`
    : `'{}'::jsonb`;
  const docs =
    `COALESCE((SELECT jsonb_agg(${d}.doc) FROM (SELECT ${doc} AS doc ` +
    `FROM (${joined.sql}) AS ${l} WHERE ${columnRef('objectId', l)} = ${columnRef(localField, a)}` +
    `${conds.length ? ` AND ${conds.join(' AND ')}` : ''}) AS ${d}), '[]'::jsonb) AS ${quoteIdent(as)}`;
  const kept = Object.fromEntries(Object.entries(rel.fields).filter(([n]) => n !== as));
  return {
    sql: `SELECT ${list(kept, a, [docs, ...keepOrd(rel, a)])} FROM (${rel.sql}) AS ${a}`,
    fields: { ...kept, [as]: { type: 'Array' } },
    ordered: rel.ordered,
    listable: rel.listable,
  };
}

interface LookupJoin {
  from: string;
  localField: string;
  foreignField: string;
  as: unknown;
  /** Plain wheres the joined rows must also match (the validator's scope stages). */
  matches: Record<string, unknown>[];
  project?: Record<string, unknown>;
}

const LOOKUP_SHAPE =
  '$lookup takes { from, localField, foreignField, as } along a pointer (or the scoped ' +
  'let/pipeline form the pipeline validator writes); other let/pipeline joins are not supported ' +
  'on the PostgreSQL path.';

/**
 * The join a `$lookup` describes. Besides the plain equality form, accepts the one let/pipeline
 * form the pipeline validator produces when the joined class is scoped:
 * `{ from, let: { pa_local: '$field' }, pipeline: [...{$match: where}, {$match: {$expr: {$in:
 * ['$objectId', {$cond: [{$isArray: '$$pa_local'}, '$$pa_local', ['$$pa_local']]}]}}},
 * ...{$project}], as }`.
 */
function lookupJoin(spec: unknown): LookupJoin {
  if (!isPlainObject(spec) || typeof spec.from !== 'string')
    throw new InvalidQueryError(LOOKUP_SHAPE);
  const keys = Object.keys(spec).sort().join(',');
  if (keys === 'as,foreignField,from,localField') {
    if (typeof spec.localField !== 'string' || typeof spec.foreignField !== 'string') {
      throw new InvalidQueryError(LOOKUP_SHAPE);
    }
    return {
      from: spec.from,
      localField: spec.localField,
      foreignField: spec.foreignField,
      as: spec.as,
      matches: [],
    };
  }
  if (
    keys !== 'as,from,let,pipeline' ||
    !isPlainObject(spec.let) ||
    !Array.isArray(spec.pipeline)
  ) {
    throw new InvalidQueryError(LOOKUP_SHAPE);
  }
  const vars = Object.entries(spec.let);
  if (vars.length !== 1 || vars[0][0] !== 'pa_local' || typeof vars[0][1] !== 'string') {
    throw new InvalidQueryError(LOOKUP_SHAPE);
  }
  const localRef = vars[0][1];
  if (!localRef.startsWith('$') || localRef.startsWith('$$') || localRef.includes('.')) {
    throw new InvalidQueryError(LOOKUP_SHAPE);
  }
  const matches: Record<string, unknown>[] = [];
  let foreignField: string | undefined;
  let project: Record<string, unknown> | undefined;
  const local = '$$pa_local';
  for (const stage of spec.pipeline) {
    const match =
      isPlainObject(stage) && Object.keys(stage).length === 1 ? stage.$match : undefined;
    const proj =
      isPlainObject(stage) && Object.keys(stage).length === 1 ? stage.$project : undefined;
    if (isPlainObject(match) && '$expr' in match) {
      const expr = match.$expr;
      const inArgs = isPlainObject(expr) ? expr.$in : undefined;
      const ok =
        Object.keys(match).length === 1 &&
        Array.isArray(inArgs) &&
        inArgs.length === 2 &&
        typeof inArgs[0] === 'string' &&
        /^\$(objectId|_id)$/.test(inArgs[0]) &&
        JSON.stringify(inArgs[1]) ===
          JSON.stringify({ $cond: [{ $isArray: local }, local, [local]] });
      if (!ok || foreignField) throw new InvalidQueryError(LOOKUP_SHAPE);
      foreignField = (inArgs[0] as string).slice(1);
    } else if (isPlainObject(match)) {
      matches.push(match);
    } else if (isPlainObject(proj) && !project) {
      project = proj;
    } else {
      throw new InvalidQueryError(LOOKUP_SHAPE);
    }
  }
  if (!foreignField) throw new InvalidQueryError(LOOKUP_SHAPE);
  return {
    from: spec.from,
    localField: localRef.slice(1),
    foreignField,
    as: spec.as,
    matches,
    project,
  };
}

/** The let/pipeline form the validator writes for a scoped pointer join (compiled as a join). */
function isPointerJoin(spec: Record<string, unknown>): boolean {
  return (
    isPlainObject(spec.let) &&
    Object.keys(spec.let).length === 1 &&
    'pa_local' in spec.let &&
    spec.localField === undefined
  );
}

/**
 * `$lookup: { from, let, pipeline, as }`: the joined class is a scoped source (row ACL, CLP, scope
 * where, visible columns); the validator's scope and allowlist stages open the pipeline, then the
 * agent's stages run with `$$variables` bound to the outer row's values. The matching documents
 * become an array, in the sub-pipeline's order.
 */
function lookupPipeline(env: StageEnv, spec: Record<string, unknown>, rel: Relation): Relation {
  const extra = Object.keys(spec).filter((k) => !['from', 'let', 'pipeline', 'as'].includes(k));
  if (typeof spec.from !== 'string' || extra.length) {
    throw new InvalidQueryError(
      `$lookup with a pipeline takes { from, let?, pipeline, as }` +
        (extra.length
          ? `; '${extra[0]}' is not supported with it on the PostgreSQL path (match on the field inside the pipeline with $expr).`
          : '.'),
    );
  }
  const as = assertOutputName(spec.as, '$lookup as');
  const a = env.params.alias('s');
  const outer = new ExprCompiler(env.params, rel, a, '$lookup let', env.vars);
  const vars: Record<string, Ref> = {};
  if (spec.let !== undefined) {
    if (!isPlainObject(spec.let))
      throw new InvalidQueryError(`$lookup let takes { name: <expression> }.`);
    for (const [name, value] of Object.entries(spec.let)) {
      if (!/^[a-z][A-Za-z0-9_]*$/.test(name)) {
        throw new InvalidQueryError(
          `$lookup let: variable '${name}' must start with a lowercase letter.`,
        );
      }
      vars[name] = outer.compile(value);
    }
  }
  const joined = scopedSource(spec.from, env.ctx, env.params);
  const start: Relation = {
    sql: joined.sql,
    fields: joined.fields,
    ordered: false,
    listable: false,
  };
  const sub = env.withVars(vars).pipeline(spec.pipeline, start, '$lookup pipeline');
  const x = env.params.alias('d');
  const json = new ExprCompiler(env.params, sub, x, '$lookup');
  const parts = Object.entries(sub.fields).map(
    ([n, field]) => `${env.params.add(n)}::text, ${json.jsonb({ expr: columnRef(n, x), field })}`,
  );
  const doc = parts.length
    ? `jsonb_strip_nulls(jsonb_build_object(${parts.join(', ')}))`
    : `'{}'::jsonb`;
  const order = sub.ordered ? ` ORDER BY ${x}.${ORD}` : '';
  const docs = `COALESCE((SELECT jsonb_agg(${doc}${order}) FROM (${sub.sql}) AS ${x}), '[]'::jsonb) AS ${quoteIdent(as)}`;
  const kept = Object.fromEntries(Object.entries(rel.fields).filter(([n]) => n !== as));
  return {
    sql: `SELECT ${list(kept, a, [docs, ...keepOrd(rel, a)])} FROM (${rel.sql}) AS ${a}`,
    fields: { ...kept, [as]: { type: 'Array' } },
    ordered: rel.ordered,
    listable: rel.listable,
  };
}
