import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { assertOutputName, columnRef, quoteIdent } from '../pg-identifiers';
import type { PgField } from '../pg-schema';
import { known, ORD, type Relation, type StageEnv } from './relation';

const UNWIND_SHAPE =
  "$unwind takes '$field' or { path: '$field', includeArrayIndex?: 'name', preserveNullAndEmptyArrays?: true }.";

/**
 * `$unwind`: one row per element of an array field. A value that is not an array counts as an
 * array of that one value; null, missing and empty arrays drop the row unless
 * `preserveNullAndEmptyArrays` keeps it (with the field null). `includeArrayIndex` names a field
 * holding the element's index (null for a value that was not an array).
 */
export function unwindStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  const opts = typeof spec === 'string' ? { path: spec } : spec;
  if (!isPlainObject(opts) || typeof opts.path !== 'string' || !opts.path.startsWith('$')) {
    throw new InvalidQueryError(UNWIND_SHAPE);
  }
  const extra = Object.keys(opts).filter(
    (k) => !['path', 'includeArrayIndex', 'preserveNullAndEmptyArrays'].includes(k),
  );
  if (extra.length)
    throw new InvalidQueryError(`$unwind: unknown option '${extra[0]}'. ${UNWIND_SHAPE}`);
  const preserve = opts.preserveNullAndEmptyArrays;
  if (preserve !== undefined && typeof preserve !== 'boolean') {
    throw new InvalidQueryError('$unwind: preserveNullAndEmptyArrays is true or false.');
  }
  const name = opts.path.slice(1);
  if (name.includes('.')) {
    throw new InvalidQueryError(
      `$unwind of a nested path ('${opts.path}') is not supported on the PostgreSQL path; ` +
        `$addFields the array to a top-level field first, e.g. { "$addFields": { "items": "${opts.path}" } }.`,
    );
  }
  const field = known(name, rel, '$unwind');
  const indexName =
    opts.includeArrayIndex === undefined
      ? undefined
      : assertOutputName(opts.includeArrayIndex, '$unwind includeArrayIndex');
  if (indexName === name) {
    throw new InvalidQueryError('$unwind: includeArrayIndex must differ from the unwound field.');
  }
  const a = env.params.alias('s');
  const e = env.params.alias('e');
  const col = columnRef(name, a);
  const jsonish = field.type === 'Array' || field.type === 'Json' || field.type === 'Object';
  const value = jsonish ? `jsonb_typeof(${col}) = 'array'` : 'FALSE';
  const elements = jsonish
    ? `jsonb_array_elements(CASE WHEN ${value} THEN ${col} ` +
      `WHEN ${col} IS NULL OR ${col} = 'null'::jsonb THEN '[]'::jsonb ELSE jsonb_build_array(${col}) END) ` +
      `WITH ORDINALITY AS ${e}(value, idx)`
    : `(SELECT ${col} AS value, 1::bigint AS idx WHERE ${col} IS NOT NULL) AS ${e}`;
  const join =
    preserve === true ? `LEFT JOIN LATERAL ${elements} ON TRUE` : `CROSS JOIN LATERAL ${elements}`;
  const fields: Record<string, PgField> = {};
  const cols: string[] = [];
  for (const [n, f] of Object.entries(rel.fields)) {
    if (n === indexName) continue;
    if (n === name) {
      fields[n] = jsonish ? { type: 'Json' } : f;
      cols.push(`${e}.value AS ${quoteIdent(n)}`);
    } else {
      fields[n] = f;
      cols.push(columnRef(n, a));
    }
  }
  if (indexName) {
    fields[indexName] = { type: 'Number' };
    cols.push(`(CASE WHEN ${value} THEN (${e}.idx - 1)::float8 END) AS ${quoteIdent(indexName)}`);
  }
  if (rel.ordered) cols.push(`row_number() OVER (ORDER BY ${a}.${ORD}, ${e}.idx) AS ${ORD}`);
  return {
    sql: `SELECT ${cols.join(', ')} FROM (${rel.sql}) AS ${a} ${join}`,
    fields,
    ordered: rel.ordered,
    listable: rel.listable,
  };
}
