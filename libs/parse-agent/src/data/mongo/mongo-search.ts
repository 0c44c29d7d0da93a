/**
 * Atlas Search pipelines. `$search` must be the first stage of a pipeline, so it comes before the
 * class's guards: Atlas finds candidate documents by text, then the identity's `_rperm` match, any
 * CLP row match, the policy's where and the view run on them exactly as for any other read. Facet
 * counts are computed from those rows with `$facet`, never with `$searchMeta` (its counts include
 * documents the identity may not read).
 *
 * Pure: the caller gives the class's source (guards and view, see mongo-pipeline.ts). Not tested
 * against Atlas itself (no Atlas cluster can run here); these functions are tested as pipeline
 * construction, and the stages after `$search` run on a real MongoDB engine wherever one is given.
 */
import { AgentValidationError } from '../../core/errors';
import type { SearchSpec } from '../../ports/data-path';
import type { MongoDoc } from './mongo-driver';
import type { MongoClassSource } from './mongo-pipeline';
import { apiMatch, storageMatch } from './mongo-storage';

/** The score's field name in the pipeline's output (a Parse field cannot start with `_pa`). */
export const SEARCH_SCORE_FIELD = '_pa_score';

const INDEX_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks the parts of a search that do not depend on the identity. The fields a search reads must
 * also be ones the identity may see: `searchPipeline` checks that against the class's view.
 */
export function assertSearchSpec(spec: SearchSpec): void {
  if (spec.mode !== 'text' && spec.mode !== 'autocomplete') {
    throw new AgentValidationError(`Unknown search mode '${String(spec.mode)}'.`);
  }
  if (typeof spec.query !== 'string' || !spec.query.trim()) {
    throw new AgentValidationError('query must be a non-empty string.');
  }
  if (typeof spec.index !== 'string' || !INDEX_NAME.test(spec.index)) {
    throw new AgentValidationError(
      'index must name an Atlas Search index: letters, digits, _ and -, at most 64 characters.',
    );
  }
  if (!Array.isArray(spec.paths) || spec.paths.length === 0) {
    throw new AgentValidationError('Name at least one field to search in (fields).');
  }
  if (spec.mode === 'autocomplete' && spec.paths.length !== 1) {
    throw new AgentValidationError(
      'autocomplete searches exactly one field (an autocomplete-typed field of the index).',
    );
  }
  if (spec.fuzzyMaxEdits !== undefined && spec.fuzzyMaxEdits !== 1 && spec.fuzzyMaxEdits !== 2) {
    throw new AgentValidationError('fuzzy max_edits must be 1 or 2.');
  }
  if (!Number.isInteger(spec.limit) || spec.limit < 1) {
    throw new AgentValidationError('limit must be a positive integer.');
  }
}

/** The `$search` stage itself (storage names: a searchable String field has the same name). */
export function searchStage(spec: SearchSpec): MongoDoc {
  const fuzzy = spec.fuzzyMaxEdits ? { fuzzy: { maxEdits: spec.fuzzyMaxEdits } } : {};
  const operator =
    spec.mode === 'autocomplete'
      ? { autocomplete: { query: spec.query, path: spec.paths[0], ...fuzzy } }
      : {
          text: {
            query: spec.query,
            path: spec.paths.length === 1 ? spec.paths[0] : [...spec.paths],
            ...fuzzy,
          },
        };
  return { $search: { index: spec.index, ...operator } };
}

/**
 * The whole pipeline for one identity: `$search`, the score kept aside, the class's guards, the
 * where (in storage names when it translates, else after the view), the view, the projection,
 * then the limit, or `$facet` with the hits and one count per facet field.
 */
export function searchPipeline(spec: SearchSpec, source: MongoClassSource): MongoDoc[] {
  assertSearchSpec(spec);
  const visible = viewFields(source.view);
  for (const field of spec.paths) {
    const type = source.schema.fields[field]?.type;
    if (!visible.has(field)) {
      throw new AgentValidationError(
        `Field '${field}' cannot be searched: it does not exist or this agent may not read it.`,
      );
    }
    if (type !== 'String') {
      throw new AgentValidationError(
        `Field '${field}' is ${type ?? 'not a stored field'}: full-text search reads String fields only.`,
      );
    }
  }
  for (const field of [...(spec.keys ?? []), ...(spec.facets?.fields ?? [])]) {
    if (!visible.has(field)) {
      throw new AgentValidationError(
        `Field '${field}' does not exist or this agent may not read it, so it cannot be returned or counted.`,
      );
    }
  }

  const pipeline: MongoDoc[] = [
    searchStage(spec),
    { $addFields: { [SEARCH_SCORE_FIELD]: { $meta: 'searchScore' } } },
    ...source.guards,
  ];
  let after: MongoDoc | undefined;
  if (spec.where && Object.keys(spec.where).length) {
    const match = apiMatch(spec.where, source.schema);
    const storage = storageMatch(match, source.schema);
    if (storage) pipeline.push({ $match: storage });
    else after = { $match: match };
  }
  // The view presents API names without internal or protected fields; it keeps the score.
  const view = source.view.$project as MongoDoc;
  pipeline.push({ $project: { ...view, [SEARCH_SCORE_FIELD]: 1 } });
  if (after) pipeline.push(after);
  if (spec.keys?.length) {
    const keep: MongoDoc = { objectId: 1, createdAt: 1, updatedAt: 1, [SEARCH_SCORE_FIELD]: 1 };
    for (const key of spec.keys) keep[key] = 1;
    pipeline.push({ $project: keep });
  }
  if (!spec.facets?.fields.length) {
    pipeline.push({ $limit: spec.limit });
    return pipeline;
  }
  const branches: Record<string, MongoDoc[]> = { hits: [{ $limit: spec.limit }] };
  spec.facets.fields.forEach((field, i) => {
    branches[`f${i}`] = [
      { $match: { [field]: { $exists: true } } },
      { $sortByCount: `$${field}` },
      { $limit: spec.facets!.limit },
    ];
  });
  pipeline.push({ $facet: branches });
  return pipeline;
}

/** The API field names a view stage presents (`_id: 0` aside). */
function viewFields(view: MongoDoc): Set<string> {
  const project = (view.$project ?? {}) as MongoDoc;
  return new Set(Object.keys(project).filter((k) => k !== '_id'));
}
