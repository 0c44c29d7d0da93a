import { AgentValidationError, InvalidQueryError } from '../../core/errors';
import { dateBucketSql } from './group-by-date-sql';
import { assertOutputName, columnRef, quoteIdent } from './pg-identifiers';
import { ownField, type PgField } from './pg-schema';
import { SqlParams, type SqlQuery } from './sql-params';
import { scopedSource, type SqlContext } from './scoped-source';
import { compileWhere, fieldsHint } from './where-to-sql';
import { isPlainObject } from '../../core/plain-object';

export const SUPPORTED_STAGES = [
  '$match',
  '$group',
  '$sort',
  '$limit',
  '$skip',
  '$project',
  '$count',
  '$unwind',
  '$lookup',
] as const;
export const SUPPORTED_ACCUMULATORS = ['$sum', '$avg', '$min', '$max', '$count'] as const;

const MAX_STAGES = 50;
/** Hidden column carrying row order from a $sort through later stages (subqueries lose ORDER BY). */
const ORD = '"__ord"';

/** The rows a stage yields: a SQL subquery and the fields its columns hold. */
interface Relation {
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

/** The compiled pipeline and the fields of its output rows (to shape them for the API). */
export interface CompiledPipeline extends SqlQuery {
  fields: Record<string, PgField>;
}

export interface PipelineOptions {
  /** A final cap on the rows returned (bound, applied after the pipeline). */
  maxRows?: number;
}

/**
 * Compiles a MongoDB-style pipeline over `className` into one parameterized query of nested
 * subqueries. Every class read (the base class and every $lookup) is a scoped source: row ACL,
 * the scope's where and only visible columns. Stages outside SUPPORTED_STAGES are refused.
 */
export function compilePipeline(
  className: string,
  pipeline: unknown,
  ctx: SqlContext,
  options: PipelineOptions = {},
): CompiledPipeline {
  if (!Array.isArray(pipeline)) throw new InvalidQueryError('pipeline must be an array of stages.');
  if (pipeline.length > MAX_STAGES) {
    throw new InvalidQueryError(`pipeline has more than ${MAX_STAGES} stages.`);
  }
  const params = new SqlParams();
  const base = scopedSource(className, ctx, params);
  let rel: Relation = { sql: base.sql, fields: base.fields, ordered: false, listable: false };
  const compiler = new StageCompiler(params, ctx);
  pipeline.forEach((stage, index) => {
    rel = compiler.stage(stage, rel, index);
  });
  const a = params.alias('s');
  const order = rel.ordered ? ` ORDER BY ${a}.${ORD}` : '';
  const limit =
    options.maxRows === undefined
      ? ''
      : ` LIMIT ${params.addCount(options.maxRows, 'maxRows', { min: 1 })}`;
  return {
    ...params.query(`SELECT ${list(rel.fields, a)} FROM (${rel.sql}) AS ${a}${order}${limit}`),
    fields: rel.fields,
  };
}

/** `a."x", a."y"`: the columns of `fields` read from alias `a`. */
function list(fields: Record<string, PgField>, a: string, extra: string[] = []): string {
  const cols = Object.keys(fields).map((name) => columnRef(name, a));
  const all = [...cols, ...extra];
  return all.length ? all.join(', ') : 'NULL AS "__none"';
}

interface Ref {
  expr: string;
  field: PgField;
}

class StageCompiler {
  constructor(
    private readonly params: SqlParams,
    private readonly ctx: SqlContext,
  ) {}

  stage(stage: unknown, rel: Relation, index: number): Relation {
    const keys = isPlainObject(stage) ? Object.keys(stage) : [];
    if (keys.length !== 1) {
      throw new InvalidQueryError(
        `Stage ${index} must be an object with exactly one stage operator.`,
      );
    }
    const op = keys[0];
    const spec = (stage as Record<string, unknown>)[op];
    switch (op) {
      case '$match':
        return this.match(spec, rel);
      case '$sort':
        return this.sort(spec, rel);
      case '$limit':
        return this.limitSkip(spec, rel, 'LIMIT');
      case '$skip':
        return this.limitSkip(spec, rel, 'OFFSET');
      case '$project':
        return this.project(spec, rel);
      case '$group':
        return this.group(spec, rel);
      case '$count':
        return this.count(spec, rel);
      case '$unwind':
        return this.unwind(spec, rel);
      case '$lookup':
        return this.lookup(spec, rel);
      default:
        throw new InvalidQueryError(
          `Stage '${op}' is not supported on the PostgreSQL path. Supported stages: ` +
            `${SUPPORTED_STAGES.join(', ')}.`,
        );
    }
  }

  private keepOrd(rel: Relation, a: string): string[] {
    return rel.ordered ? [`${a}.${ORD}`] : [];
  }

  private match(spec: unknown, rel: Relation): Relation {
    const a = this.params.alias('s');
    const cond = compileWhere(spec, rel, this.params, a);
    return {
      sql: `SELECT ${list(rel.fields, a, this.keepOrd(rel, a))} FROM (${rel.sql}) AS ${a} WHERE ${cond}`,
      fields: rel.fields,
      ordered: rel.ordered,
      listable: rel.listable,
    };
  }

  private sort(spec: unknown, rel: Relation): Relation {
    if (!isPlainObject(spec) || Object.keys(spec).length === 0) {
      throw new InvalidQueryError('$sort takes an object of { field: 1 | -1 }.');
    }
    const a = this.params.alias('s');
    const terms = Object.entries(spec).map(([path, dir]) => {
      if (dir !== 1 && dir !== -1) throw new InvalidQueryError(`$sort '${path}': use 1 or -1.`);
      const ref = this.ref(`$${path}`, rel, a, '$sort');
      if (ref.field.type === 'GeoPoint' || ref.field.type === 'Polygon') {
        throw new InvalidQueryError(`$sort: ${ref.field.type} fields are not sortable.`);
      }
      // MongoDB sorts missing values first ascending and last descending.
      return `${ref.expr} ${dir === 1 ? 'ASC NULLS FIRST' : 'DESC NULLS LAST'}`;
    });
    return {
      sql:
        `SELECT ${list(rel.fields, a)}, row_number() OVER (ORDER BY ${terms.join(', ')}) AS ${ORD} ` +
        `FROM (${rel.sql}) AS ${a}`,
      fields: rel.fields,
      ordered: true,
      listable: rel.listable,
    };
  }

  private limitSkip(spec: unknown, rel: Relation, clause: 'LIMIT' | 'OFFSET'): Relation {
    const a = this.params.alias('s');
    const n = this.params.addCount(spec, clause === 'LIMIT' ? '$limit' : '$skip', {
      min: clause === 'LIMIT' ? 1 : 0,
    });
    const order = rel.ordered ? ` ORDER BY ${a}.${ORD}` : '';
    return {
      sql: `SELECT ${list(rel.fields, a, this.keepOrd(rel, a))} FROM (${rel.sql}) AS ${a}${order} ${clause} ${n}`,
      fields: rel.fields,
      ordered: rel.ordered,
      listable: rel.listable,
    };
  }

  private project(spec: unknown, rel: Relation): Relation {
    if (!isPlainObject(spec) || Object.keys(spec).length === 0) {
      throw new InvalidQueryError('$project takes a non-empty object.');
    }
    const a = this.params.alias('s');
    const entries = Object.entries(spec);
    const isExclude = (v: unknown) => v === 0 || v === false;
    const inclusion = entries.some(([, v]) => !isExclude(v));
    const fields: Record<string, PgField> = {};
    const cols: string[] = [];
    if (!inclusion) {
      for (const [key] of entries) this.known(key, rel, '$project');
      for (const [name, field] of Object.entries(rel.fields)) {
        if (Object.prototype.hasOwnProperty.call(spec, name)) continue;
        fields[name] = field;
        cols.push(columnRef(name, a));
      }
    } else {
      if (ownField(rel.fields, '_id') && !Object.prototype.hasOwnProperty.call(spec, '_id')) {
        fields._id = rel.fields._id;
        cols.push(columnRef('_id', a));
      }
      for (const [key, v] of entries) {
        if (isExclude(v)) {
          if (key !== '_id') {
            throw new InvalidQueryError(
              `$project cannot mix inclusion and exclusion (only _id: 0 may be excluded); '${key}'.`,
            );
          }
          continue;
        }
        if (v === 1 || v === true) {
          fields[key] = this.known(key, rel, '$project');
          cols.push(columnRef(key, a));
        } else if (typeof v === 'string' && v.startsWith('$')) {
          const name = assertOutputName(key, '$project');
          const ref = this.ref(v, rel, a, '$project');
          fields[name] = ref.field;
          cols.push(`${ref.expr} AS ${quoteIdent(name)}`);
        } else {
          throw new InvalidQueryError(
            `$project '${key}': use 1, 0 or a '$field' reference; expressions are not supported.`,
          );
        }
      }
    }
    const all = [...cols, ...this.keepOrd(rel, a)];
    return {
      sql: `SELECT ${all.length ? all.join(', ') : 'NULL AS "__none"'} FROM (${rel.sql}) AS ${a}`,
      fields,
      ordered: rel.ordered,
      listable: true,
    };
  }

  private group(spec: unknown, rel: Relation): Relation {
    if (!isPlainObject(spec) || !('_id' in spec)) {
      throw new InvalidQueryError(
        '$group needs an _id (null, a "$field" or an object of "$field"s).',
      );
    }
    const a = this.params.alias('s');
    // Inner select: keys and accumulated values as plain columns, so GROUP BY sees only columns.
    const inner: string[] = [];
    const keyCols: string[] = [];
    const g = this.params.alias('g');
    let idSql: string;
    let idField: PgField;
    const id = spec._id;
    if (id === null) {
      idSql = 'NULL::text';
      idField = { type: 'String' };
    } else if (typeof id === 'string') {
      const ref = this.ref(id, rel, a, '$group _id');
      inner.push(`${ref.expr} AS "__k0"`);
      keyCols.push(`${g}."__k0"`);
      idSql = `${g}."__k0"`;
      idField = ref.field;
    } else if (isPlainObject(id) && Object.keys(id).length === 1 && '$dateTrunc' in id) {
      const trunc = this.dateTrunc(id.$dateTrunc, rel, a);
      inner.push(`${trunc} AS "__k0"`);
      keyCols.push(`${g}."__k0"`);
      idSql = `${g}."__k0"`;
      idField = { type: 'Date' };
    } else if (isPlainObject(id) && Object.keys(id).length > 0) {
      const parts: string[] = [];
      Object.entries(id).forEach(([name, path], i) => {
        assertOutputName(name, '$group _id');
        const ref = this.ref(path, rel, a, '$group _id');
        inner.push(`${ref.expr} AS "__k${i}"`);
        keyCols.push(`${g}."__k${i}"`);
        parts.push(`${this.params.add(name)}::text, to_jsonb(${g}."__k${i}")`);
      });
      idSql = `jsonb_build_object(${parts.join(', ')})`;
      idField = { type: 'Object' };
    } else {
      throw new InvalidQueryError(
        '$group _id must be null, a "$field", an object of "$field"s or { $dateTrunc: { date, unit } }.',
      );
    }
    const outputs: string[] = [`${idSql} AS "_id"`];
    const fields: Record<string, PgField> = { _id: idField };
    let v = 0;
    for (const [name, accSpec] of Object.entries(spec)) {
      if (name === '_id') continue;
      assertOutputName(name, '$group');
      const acc = isPlainObject(accSpec) ? Object.keys(accSpec) : [];
      if (acc.length !== 1 || !(SUPPORTED_ACCUMULATORS as readonly string[]).includes(acc[0])) {
        throw new InvalidQueryError(
          `$group '${name}': use one accumulator of ${SUPPORTED_ACCUMULATORS.join(', ')}.`,
        );
      }
      const op = acc[0];
      const arg = (accSpec as Record<string, unknown>)[op];
      const col = `${g}."__v${v}"`;
      if (op === '$count' || (op === '$sum' && typeof arg === 'number')) {
        if (op === '$count' && !(isPlainObject(arg) && Object.keys(arg).length === 0)) {
          throw new InvalidQueryError(`$group '${name}': $count takes {}.`);
        }
        if (typeof arg === 'number' && !Number.isFinite(arg)) {
          throw new InvalidQueryError(`$group '${name}': $sum takes a finite number.`);
        }
        const times = op === '$sum' && arg !== 1 ? ` * ${this.params.add(arg)}::float8` : '';
        outputs.push(`(count(*)::float8${times}) AS ${quoteIdent(name)}`);
        fields[name] = { type: 'Number' };
        continue;
      }
      const ref = this.ref(arg, rel, a, `$group '${name}'`);
      const value = this.accValue(op, ref, name);
      inner.push(`${value.expr} AS "__v${v}"`);
      v += 1;
      const aggregated =
        op === '$sum'
          ? `COALESCE(sum(${col}), 0)::float8`
          : op === '$avg'
            ? `avg(${col})::float8`
            : `${op === '$min' ? 'min' : 'max'}(${col})`;
      outputs.push(`${aggregated} AS ${quoteIdent(name)}`);
      fields[name] = value.field;
    }
    const innerSql = `SELECT ${inner.length ? inner.join(', ') : 'NULL AS "__none"'} FROM (${rel.sql}) AS ${a}`;
    // Without keys SQL still returns one row for empty input; MongoDB returns none.
    const tail = keyCols.length ? ` GROUP BY ${keyCols.join(', ')}` : ' HAVING count(*) > 0';
    return {
      sql: `SELECT ${outputs.join(', ')} FROM (${innerSql}) AS ${g}${tail}`,
      fields,
      ordered: false,
      listable: true,
    };
  }

  /**
   * `{ date: '$field', unit, timezone?, startOfWeek? }`: the instant the period containing the
   * date starts, as MongoDB's `$dateTrunc` computes it (weeks only from Monday, as the group_by_date
   * tool asks; binSize is not supported).
   */
  private dateTrunc(spec: unknown, rel: Relation, a: string): string {
    const where = '$group _id $dateTrunc';
    const known = ['date', 'unit', 'timezone', 'startOfWeek'];
    const extra = isPlainObject(spec) ? Object.keys(spec).filter((k) => !known.includes(k)) : [];
    if (!isPlainObject(spec) || extra.length || typeof spec.unit !== 'string') {
      throw new InvalidQueryError(
        `${where} takes { date: '$field', unit, timezone?, startOfWeek? }` +
          (extra.length ? `; '${extra[0]}' is not supported on the PostgreSQL path.` : '.'),
      );
    }
    if (spec.startOfWeek !== undefined) {
      const monday = typeof spec.startOfWeek === 'string' && /^mon(day)?$/i.test(spec.startOfWeek);
      if (spec.unit !== 'week' || !monday) {
        throw new InvalidQueryError(
          `${where}: startOfWeek is only supported as 'monday' with unit 'week' on the PostgreSQL path.`,
        );
      }
    } else if (spec.unit === 'week') {
      // MongoDB's default week starts on Sunday; date_trunc's on Monday.
      throw new InvalidQueryError(`${where}: unit 'week' needs startOfWeek: 'monday' here.`);
    }
    const ref = this.ref(spec.date, rel, a, where);
    if (ref.field.type !== 'Date') {
      throw new InvalidQueryError(
        `${where} needs a Date field; '${String(spec.date)}' is ${ref.field.type}.`,
      );
    }
    return dateBucketSql(ref.expr, spec.unit, spec.timezone, this.params).instant;
  }

  /** The per-row value an accumulator folds: numbers (jsonb numbers extracted), dates or strings. */
  private accValue(op: string, ref: Ref, name: string): Ref {
    const { type } = ref.field;
    if (type === 'Number') return ref;
    if (type === 'Json' || type === 'Object') {
      return {
        expr: `(CASE WHEN jsonb_typeof(${ref.expr}) = 'number' THEN (${ref.expr} #>> '{}')::float8 END)`,
        field: { type: 'Number' },
      };
    }
    if ((op === '$min' || op === '$max') && (type === 'Date' || type === 'String')) return ref;
    throw new InvalidQueryError(`$group '${name}': ${op} cannot fold a ${type} field.`);
  }

  private count(spec: unknown, rel: Relation): Relation {
    const name = assertOutputName(spec, '$count');
    const a = this.params.alias('s');
    return {
      sql: `SELECT count(*)::float8 AS ${quoteIdent(name)} FROM (${rel.sql}) AS ${a} HAVING count(*) > 0`,
      fields: { [name]: { type: 'Number' } },
      ordered: false,
      listable: true,
    };
  }

  private unwind(spec: unknown, rel: Relation): Relation {
    const opts = typeof spec === 'string' ? { path: spec } : spec;
    if (!isPlainObject(opts) || typeof opts.path !== 'string' || !opts.path.startsWith('$')) {
      throw new InvalidQueryError(
        "$unwind takes '$field' or { path: '$field', preserveNullAndEmptyArrays }.",
      );
    }
    const extra = Object.keys(opts).filter(
      (k) => k !== 'path' && k !== 'preserveNullAndEmptyArrays',
    );
    if (extra.length) {
      throw new InvalidQueryError(
        `$unwind: option '${extra[0]}' is not supported (only path, preserveNullAndEmptyArrays).`,
      );
    }
    const name = opts.path.slice(1);
    const field = this.known(name, rel, '$unwind');
    if (field.type !== 'Array' && field.type !== 'Json') {
      throw new InvalidQueryError(`$unwind needs an Array field; '${name}' is ${field.type}.`);
    }
    const a = this.params.alias('s');
    const e = this.params.alias('e');
    const col = columnRef(name, a);
    const elements =
      `jsonb_array_elements(CASE WHEN jsonb_typeof(${col}) = 'array' THEN ${col} ` +
      `WHEN ${col} IS NULL OR ${col} = 'null'::jsonb THEN '[]'::jsonb ELSE jsonb_build_array(${col}) END) ` +
      `WITH ORDINALITY AS ${e}(value, idx)`;
    const join =
      opts.preserveNullAndEmptyArrays === true
        ? `LEFT JOIN LATERAL ${elements} ON TRUE`
        : `CROSS JOIN LATERAL ${elements}`;
    const cols = Object.keys(rel.fields).map((n) =>
      n === name ? `${e}.value AS ${quoteIdent(n)}` : columnRef(n, a),
    );
    if (rel.ordered) cols.push(`row_number() OVER (ORDER BY ${a}.${ORD}, ${e}.idx) AS ${ORD}`);
    return {
      sql: `SELECT ${cols.join(', ')} FROM (${rel.sql}) AS ${a} ${join}`,
      fields: { ...rel.fields, [name]: { type: 'Json' } },
      ordered: rel.ordered,
      listable: rel.listable,
    };
  }

  private lookup(spec: unknown, rel: Relation): Relation {
    const join = lookupJoin(spec);
    const { from, localField, foreignField } = join;
    const as = assertOutputName(join.as, '$lookup as');
    const local = this.known(localField, rel, '$lookup localField');
    if (
      local.type !== 'Pointer' ||
      local.targetClass !== from ||
      (foreignField !== 'objectId' && foreignField !== '_id')
    ) {
      throw new InvalidQueryError(
        `$lookup follows a pointer: localField must be a Pointer to '${from}' and foreignField 'objectId'.`,
      );
    }
    const joined = scopedSource(from, this.ctx, this.params);
    if (!ownField(joined.fields, 'objectId')) {
      throw new AgentValidationError(`$lookup: objectId of ${from} is not visible to this reader.`);
    }
    const l = this.params.alias('l');
    // The validator's scope stages for the joined class (tenant, filters) and its projection.
    const conds = join.matches.map((where) => compileWhere(where, joined, this.params, l));
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
    const a = this.params.alias('s');
    const d = this.params.alias('d');
    const docCols = Object.keys(docFields).map((n) => columnRef(n, l));
    const docs =
      `COALESCE((SELECT jsonb_agg(to_jsonb(${d})) FROM (SELECT ${docCols.length ? docCols.join(', ') : 'NULL AS "__none"'} ` +
      `FROM (${joined.sql}) AS ${l} WHERE ${columnRef('objectId', l)} = ${columnRef(localField, a)}` +
      `${conds.length ? ` AND ${conds.join(' AND ')}` : ''}) AS ${d}), '[]'::jsonb) AS ${quoteIdent(as)}`;
    const kept = Object.fromEntries(Object.entries(rel.fields).filter(([n]) => n !== as));
    return {
      sql: `SELECT ${list(kept, a, [docs, ...this.keepOrd(rel, a)])} FROM (${rel.sql}) AS ${a}`,
      fields: { ...kept, [as]: { type: 'Array' } },
      ordered: rel.ordered,
      listable: rel.listable,
    };
  }

  private known(name: string, rel: Relation, where: string): PgField {
    const field = ownField(rel.fields, name);
    if (!field) {
      throw new AgentValidationError(
        `${where}: unknown field '${name}': not a field this reader can use at this stage. ` +
          fieldsHint(rel, 'Fields at this stage'),
      );
    }
    return field;
  }

  /** A `'$field'` or `'$field.path'` reference (dotted paths reach into jsonb fields). */
  private ref(spec: unknown, rel: Relation, a: string, where: string): Ref {
    if (typeof spec !== 'string' || !spec.startsWith('$') || spec.startsWith('$$')) {
      throw new InvalidQueryError(
        `${where}: expected a '$field' reference, got ${JSON.stringify(spec)}.`,
      );
    }
    const [head, ...rest] = spec.slice(1).split('.');
    const field = this.known(head, rel, where);
    if (rest.length === 0) return { expr: columnRef(head, a), field };
    if (!['Object', 'Json', 'Array'].includes(field.type) || rest.some((s) => !s)) {
      throw new InvalidQueryError(`${where}: '${spec}' reaches into a ${field.type} field.`);
    }
    return {
      expr: `(${columnRef(head, a)} #> ${this.params.add(rest)}::text[])`,
      field: { type: 'Json' },
    };
  }
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
