/**
 * Atlas Vector Search pipelines. `$vectorSearch` must be the first stage of a pipeline, so it
 * comes before the class's guards. Its `filter` (a pre-filter, run by Atlas inside the index)
 * carries the tenant constraint and the constraints on the class's filter fields, so the nearest
 * neighbours are searched among the tenant's rows only; then the identity's `_rperm` match, any CLP
 * row match, the whole planned where (canonical filter, agent filters, tenant again) and the view
 * run on the candidates exactly as for any other read, then the projection and the limit.
 *
 * One vector per document: the application stores the embedding of the whole text field in the
 * indexed vector field (Atlas indexes one vector per path and document), so each document is one
 * chunk covering its text. Pure: tested as pipeline construction only; no MongoDB, let alone Atlas,
 * runs here.
 */
import { AgentValidationError } from '../../core/errors';
import type { VectorSearchSpec } from '../../ports/data-path';
import type { MongoDoc } from './mongo-driver';
import type { MongoClassSource } from './mongo-pipeline';
import { apiMatch, storageMatch } from './mongo-storage';

/** The score's field name in the pipeline's output (a Parse field cannot start with `_pa`). */
export const VECTOR_SCORE_FIELD = '_pa_vscore';

const INDEX_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const VECTOR_PATH = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*$/;
/** Operators `$vectorSearch`'s filter accepts on a field. */
const PREFILTER_OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);
/** Candidates Atlas ranks per document returned (its recall knob), and the ceiling. */
const CANDIDATES_PER_RESULT = 20;
const MAX_CANDIDATES = 10_000;

/** Where Atlas Vector Search finds the vectors (the `mongo.atlasVectorSearch` option). */
export interface AtlasVectorIndex {
  /** The Atlas Vector Search index's name. */
  index: string;
  /**
   * The document field holding each searched text field's vector: a function of the text field,
   * default `<field>Embedding`. The index must declare it as a `vector` field, and the tenant
   * field and the class's filter fields as `filter` fields.
   */
  path?: (textField: string) => string;
}

/** What the pre-filter may name: the tenant field (required there) and the filter fields. */
export interface VectorPrefilterFields {
  tenantField?: string;
  filterFields: readonly string[];
}

/** The document field of a text field's vector, checked. */
export function vectorPath(index: AtlasVectorIndex, textField: string): string {
  const path = index.path ? index.path(textField) : `${textField}Embedding`;
  if (typeof path !== 'string' || !VECTOR_PATH.test(path)) {
    throw new AgentValidationError(
      `mongo.atlasVectorSearch.path gave '${String(path)}' for ${textField}: a field path of letters, digits and _ (not starting with _).`,
    );
  }
  return path;
}

/**
 * The conjuncts of a planned where that `$vectorSearch`'s filter can run: constraints on the
 * tenant field and the filter fields, as plain values or the filter's operators on String, Number
 * and Boolean values. Underscore keys and any other field are refused if they reach this function
 * as prefilter fields; other constraints stay for the match after the guards. The tenant
 * constraint must be among them: without it the search would rank other tenants' rows, so it is
 * refused (fail closed).
 */
export function vectorPrefilter(
  where: MongoDoc | undefined,
  fields: VectorPrefilterFields,
): MongoDoc | undefined {
  const allowed = new Set(fields.filterFields);
  if (fields.tenantField) allowed.add(fields.tenantField);
  for (const field of allowed) {
    if (field.startsWith('_') || field.includes('.') || field.startsWith('$')) {
      throw new AgentValidationError(
        `'${field}' cannot be a vector search pre-filter field: internal and nested names are refused.`,
      );
    }
  }
  const conjuncts: MongoDoc[] = [];
  collectConjuncts(where ?? {}, allowed, conjuncts);
  if (fields.tenantField && !conjuncts.some((c) => fields.tenantField! in c)) {
    throw new AgentValidationError(
      `The tenant constraint on '${fields.tenantField}' cannot be given to Atlas Vector Search as a pre-filter; the search is refused rather than ranking other tenants' rows.`,
    );
  }
  if (!conjuncts.length) return undefined;
  return conjuncts.length === 1 ? conjuncts[0] : { $and: conjuncts };
}

function collectConjuncts(where: MongoDoc, allowed: Set<string>, out: MongoDoc[]): void {
  for (const [key, value] of Object.entries(where)) {
    if (key === '$and' && Array.isArray(value)) {
      for (const part of value) {
        if (isPlain(part)) collectConjuncts(part, allowed, out);
      }
      continue;
    }
    if (key.startsWith('$') || key.startsWith('_') || !allowed.has(key)) continue;
    const translated = prefilterValue(value);
    if (translated !== undefined) out.push({ [key]: translated });
  }
}

function prefilterValue(value: unknown): unknown {
  if (isScalar(value)) return { $eq: value };
  if (!isPlain(value)) return undefined;
  const ops = Object.entries(value);
  if (!ops.length) return undefined;
  const out: MongoDoc = {};
  for (const [op, operand] of ops) {
    if (!PREFILTER_OPERATORS.has(op)) return undefined;
    if (op === '$in' || op === '$nin') {
      if (!Array.isArray(operand) || !operand.every(isScalar)) return undefined;
    } else if (!isScalar(operand)) {
      return undefined;
    }
    out[op] = operand;
  }
  return out;
}

function isScalar(value: unknown): value is string | number | boolean {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function isPlain(value: unknown): value is MongoDoc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The whole pipeline for one identity: `$vectorSearch` with the pre-filter, the score kept aside,
 * the class's guards (ACL `_rperm` match, CLP row match), the planned where (in storage names when
 * it translates, else after the view), the view, the projection to the allowed keys, the limit.
 */
export function vectorSearchPipeline(
  spec: VectorSearchSpec,
  source: MongoClassSource,
  index: AtlasVectorIndex,
  prefilterFields: VectorPrefilterFields,
): MongoDoc[] {
  if (typeof index.index !== 'string' || !INDEX_NAME.test(index.index)) {
    throw new AgentValidationError(
      'mongo.atlasVectorSearch.index must name an Atlas Vector Search index: letters, digits, _ and -, at most 64 characters.',
    );
  }
  if (!Number.isInteger(spec.k) || spec.k < 1) {
    throw new AgentValidationError('k must be a positive integer.');
  }
  if (spec.mode === 'hybrid') {
    throw new AgentValidationError(
      "mode 'hybrid' is not served on MongoDB; use mode 'vector' (or the atlas_text_search tool for keywords).",
    );
  }
  const visible = new Set(
    Object.keys((source.view.$project ?? {}) as MongoDoc).filter((k) => k !== '_id'),
  );
  for (const field of [spec.field, ...(spec.keys ?? [])]) {
    if (!visible.has(field)) {
      throw new AgentValidationError(
        `Field '${field}' does not exist or this agent may not read it.`,
      );
    }
  }
  const numCandidates = Math.min(MAX_CANDIDATES, Math.max(100, spec.k * CANDIDATES_PER_RESULT));
  const filter = vectorPrefilter(spec.where, prefilterFields);
  const pipeline: MongoDoc[] = [
    {
      $vectorSearch: {
        index: index.index,
        path: vectorPath(index, spec.field),
        queryVector: [...spec.vector],
        numCandidates,
        // Every candidate comes out: the guards below drop what this identity may not read.
        limit: numCandidates,
        ...(filter ? { filter } : {}),
      },
    },
    { $addFields: { [VECTOR_SCORE_FIELD]: { $meta: 'vectorSearchScore' } } },
    ...source.guards,
  ];
  let after: MongoDoc | undefined;
  if (spec.where && Object.keys(spec.where).length) {
    const match = apiMatch(spec.where, source.schema);
    const storage = storageMatch(match, source.schema);
    if (storage) pipeline.push({ $match: storage });
    else after = { $match: match };
  }
  const view = source.view.$project as MongoDoc;
  pipeline.push({ $project: { ...view, [VECTOR_SCORE_FIELD]: 1 } });
  if (after) pipeline.push(after);
  const keep: MongoDoc = { objectId: 1, createdAt: 1, updatedAt: 1, [VECTOR_SCORE_FIELD]: 1 };
  keep[spec.field] = 1;
  for (const key of spec.keys ?? visible) keep[key] = 1;
  pipeline.push({ $project: keep });
  pipeline.push({ $limit: spec.k });
  return pipeline;
}
