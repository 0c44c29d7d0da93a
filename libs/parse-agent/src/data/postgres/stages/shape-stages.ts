import { InvalidQueryError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import { assertOutputName, columnRef, quoteIdent } from '../pg-identifiers';
import { ownField, type PgField } from '../pg-schema';
import { ExprCompiler } from './expressions';
import {
  asColumn,
  hasOwn,
  known,
  select,
  type Ref,
  type Relation,
  type StageEnv,
} from './relation';

/** `$project`, `$addFields`/`$set`, `$unset`, `$replaceRoot`/`$replaceWith`. */

const JSONISH = new Set(['Json', 'Object', 'Array']);
const isExclude = (v: unknown) => v === 0 || v === false;
/** MongoDB reads any other number (and true) in $project as an inclusion flag. */
const isInclude = (v: unknown) => v === true || (typeof v === 'number' && v !== 0);

/** `{ a: { b: 1 } }` -> [['a.b', 1]]; expression objects (with `$` keys) stay values. */
function flatten(spec: Record<string, unknown>, prefix = ''): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [key, value] of Object.entries(spec)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const nested =
      isPlainObject(value) &&
      Object.keys(value).length > 0 &&
      !Object.keys(value).some((k) => k.startsWith('$'));
    if (nested) out.push(...flatten(value, path));
    else out.push([path, value]);
  }
  return out;
}

/** A tree of dotted outputs under one top-level name: leaves are jsonb SQL values. */
type Tree = Map<string, Tree | string>;

function treeSql(env: StageEnv, tree: Tree): string {
  const parts: string[] = [];
  for (const [key, node] of tree) {
    const value = typeof node === 'string' ? node : treeSql(env, node);
    parts.push(`${env.params.add(key)}::text, ${value}`);
  }
  return `jsonb_strip_nulls(jsonb_build_object(${parts.join(', ')}))`;
}

function setPath(tree: Tree, path: string[], value: string): void {
  const [head, ...rest] = path;
  if (!rest.length) {
    tree.set(head, value);
    return;
  }
  let next = tree.get(head);
  if (!(next instanceof Map)) {
    next = new Map();
    tree.set(head, next);
  }
  setPath(next, rest, value);
}

function checkPath(path: string, where: string): string[] {
  const segments = path.split('.');
  assertOutputName(segments[0], where);
  if (segments.some((s) => !s || s.startsWith('$'))) {
    throw new InvalidQueryError(`${where}: '${path}' is not a valid field path.`);
  }
  return segments;
}

export function projectStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) {
    throw new InvalidQueryError('$project takes a non-empty object.');
  }
  const entries = flatten(spec);
  const dropsId = entries.some(([k, v]) => k === '_id' && isExclude(v));
  const rest = entries.filter(([k, v]) => !(k === '_id' && isExclude(v)));
  const inclusion = rest.some(([, v]) => !isExclude(v));
  if (!inclusion)
    return unsetPaths(
      env,
      rel,
      entries.map(([k]) => k),
      '$project',
    );
  const bad = rest.find(([, v]) => isExclude(v));
  if (bad) {
    throw new InvalidQueryError(
      `$project cannot mix inclusion and exclusion (only _id: 0 may be excluded); '${bad[0]}'. ` +
        `Use $unset for the exclusions.`,
    );
  }
  const a = env.params.alias('s');
  const exprs = new ExprCompiler(env.params, rel, a, '$project', env.vars);
  const fields: Record<string, PgField> = {};
  const cols: string[] = [];
  const trees = new Map<string, Tree>();
  // MongoDB keeps _id unless told otherwise; on a class's rows that is Parse's objectId.
  const implicitId = ownField(rel.fields, '_id') ? '_id' : 'objectId';
  if (!dropsId && ownField(rel.fields, implicitId) && !rest.some(([k]) => k === implicitId)) {
    fields[implicitId] = rel.fields[implicitId];
    cols.push(columnRef(implicitId, a));
  }
  for (const [path, v] of rest) {
    if (path === '_id' && isInclude(v) && implicitId === 'objectId') continue;
    const segments = checkPath(path, '$project');
    let ref: Ref;
    if (isInclude(v)) {
      // Including a field a stage did not produce adds nothing, as on MongoDB; a class column the
      // reader cannot see stays a refusal (it may be protected).
      if (segments.length === 1 && rel.listable && !ownField(rel.fields, path)) continue;
      const kept = segments.length === 1 ? ownField(rel.fields, path) : undefined;
      // A bigint rank kept as it is stays bigint, so a later $match on it can still stop early.
      ref = kept?.bigint ? { expr: columnRef(path, a), field: kept } : exprs.fieldRef(`$${path}`);
    } else ref = exprs.compile(v);
    if (segments.length === 1) {
      ref = asColumn(ref);
      fields[path] = ref.field;
      cols.push(`${ref.expr} AS ${quoteIdent(path)}`);
      continue;
    }
    const head = segments[0];
    if (!trees.has(head)) trees.set(head, new Map());
    setPath(trees.get(head) as Tree, segments.slice(1), exprs.jsonb(ref));
  }
  for (const [head, tree] of trees) {
    if (hasOwn(fields, head)) {
      throw new InvalidQueryError(`$project: '${head}' is set both whole and by sub-path.`);
    }
    const included = rest.every(([k, v]) => !k.startsWith(`${head}.`) || isInclude(v));
    const body = treeSql(env, tree);
    // An included sub-path of a missing field leaves the field out, as MongoDB does.
    const base = included && ownField(rel.fields, head) ? columnRef(head, a) : undefined;
    fields[head] = { type: 'Object' };
    cols.push(
      `${base ? `(CASE WHEN ${base} IS NULL THEN NULL ELSE ${body} END)` : body} AS ${quoteIdent(head)}`,
    );
  }
  return select(rel, a, cols, fields, true);
}

/** Removes fields (and sub-paths of jsonb fields) from the rows. */
function unsetPaths(env: StageEnv, rel: Relation, paths: string[], where: string): Relation {
  const a = env.params.alias('s');
  const removed = new Set<string>();
  const subPaths = new Map<string, string[][]>();
  for (const path of paths) {
    const [head, ...rest] = path.split('.');
    if (head === '_id' && !rest.length && !ownField(rel.fields, '_id')) {
      // MongoDB's _id of a class's row is Parse's objectId.
      if (ownField(rel.fields, 'objectId')) removed.add('objectId');
      continue;
    }
    if (!ownField(rel.fields, head)) {
      known(head, rel, where);
    }
    if (!rest.length) removed.add(head);
    else {
      if (!JSONISH.has(rel.fields[head].type)) continue; // a scalar has no sub-field to remove
      subPaths.set(head, [...(subPaths.get(head) ?? []), rest]);
    }
  }
  const fields: Record<string, PgField> = {};
  const cols: string[] = [];
  for (const [name, field] of Object.entries(rel.fields)) {
    if (removed.has(name)) continue;
    fields[name] = field;
    let expr = columnRef(name, a);
    for (const sub of subPaths.get(name) ?? [])
      expr = `(${expr} #- ${env.params.add(sub)}::text[])`;
    cols.push(subPaths.has(name) ? `${expr} AS ${quoteIdent(name)}` : expr);
  }
  return select(rel, a, cols, fields);
}

export function unsetStage(env: StageEnv, spec: unknown, rel: Relation): Relation {
  const paths = typeof spec === 'string' ? [spec] : spec;
  if (!Array.isArray(paths) || !paths.length || paths.some((p) => typeof p !== 'string' || !p)) {
    throw new InvalidQueryError(`$unset takes a field name or an array of field names.`);
  }
  return unsetPaths(env, rel, paths as string[], '$unset');
}

export function addFieldsStage(env: StageEnv, spec: unknown, rel: Relation, op: string): Relation {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) {
    throw new InvalidQueryError(`${op} takes a non-empty object of { name: <expression> }.`);
  }
  const a = env.params.alias('s');
  const exprs = new ExprCompiler(env.params, rel, a, op, env.vars);
  const computed = new Map<string, Ref>();
  const nested = new Map<string, Array<[string[], Ref]>>();
  // An embedded document literal adds its fields to the existing one, as MongoDB does.
  for (const [path, value] of flatten(spec)) {
    const [head, ...rest] = checkPath(path, op);
    const ref = exprs.compile(value);
    if (!rest.length) computed.set(head, asColumn(ref));
    else nested.set(head, [...(nested.get(head) ?? []), [rest, ref]]);
  }
  const fields: Record<string, PgField> = {};
  const cols: string[] = [];
  const names = [...new Set([...Object.keys(rel.fields), ...computed.keys(), ...nested.keys()])];
  for (const name of names) {
    const whole = computed.get(name);
    const subs = nested.get(name);
    if (!whole && !subs) {
      fields[name] = rel.fields[name];
      cols.push(columnRef(name, a));
      continue;
    }
    if (whole && !subs) {
      fields[name] = whole.field;
      cols.push(`${whole.expr} AS ${quoteIdent(name)}`);
      continue;
    }
    const current =
      whole ??
      (ownField(rel.fields, name)
        ? { expr: columnRef(name, a), field: rel.fields[name] }
        : undefined);
    const currentSql = current ? exprs.jsonb(current) : 'NULL::jsonb';
    let expr = `(CASE WHEN jsonb_typeof(${currentSql}) = 'object' THEN ${currentSql} ELSE '{}'::jsonb END)`;
    const values: string[] = [];
    for (const [sub, ref] of subs ?? []) {
      const value = exprs.jsonb(ref);
      values.push(`${value} IS NULL`);
      expr = `(CASE WHEN ${value} IS NULL THEN ${expr} ELSE jsonb_set(${expr}, ${env.params.add(sub)}::text[], ${value}, TRUE) END)`;
    }
    // Setting only missing values adds nothing, not even the enclosing document.
    expr = `(CASE WHEN ${values.join(' AND ')} THEN ${currentSql} ELSE ${expr} END)`;
    fields[name] = { type: 'Object' };
    cols.push(`${expr} AS ${quoteIdent(name)}`);
  }
  return select(rel, a, cols, fields);
}

/** `$replaceRoot: { newRoot }` / `$replaceWith`: a document of named expressions becomes the row. */
export function replaceRootStage(
  env: StageEnv,
  newRoot: unknown,
  rel: Relation,
  op: string,
): Relation {
  const a = env.params.alias('s');
  const exprs = new ExprCompiler(env.params, rel, a, op, env.vars);
  let doc: Record<string, unknown> | undefined;
  if (isPlainObject(newRoot) && !Object.keys(newRoot).some((k) => k.startsWith('$'))) doc = newRoot;
  else if (isPlainObject(newRoot) && Array.isArray(newRoot.$mergeObjects)) {
    doc = {};
    for (const part of newRoot.$mergeObjects) {
      if (!isPlainObject(part) || Object.keys(part).some((k) => k.startsWith('$'))) doc = undefined;
      else if (doc) Object.assign(doc, part);
      if (!doc) break;
    }
  }
  if (!doc || Object.keys(doc).length === 0) {
    throw new InvalidQueryError(
      `${op}: on the PostgreSQL path the new root must be a document of named fields, e.g. ` +
        `{ "newRoot": { "name": "$customer.name", "total": "$total" } } (or $mergeObjects of such ` +
        `documents); a field holding a whole document is not supported: $project its sub-fields instead.`,
    );
  }
  const fields: Record<string, PgField> = {};
  const cols: string[] = [];
  for (const [name, value] of Object.entries(doc)) {
    assertOutputName(name, op);
    const ref = asColumn(exprs.compile(value));
    fields[name] = ref.field;
    cols.push(`${ref.expr} AS ${quoteIdent(name)}`);
  }
  return select(rel, a, cols, fields, true);
}
