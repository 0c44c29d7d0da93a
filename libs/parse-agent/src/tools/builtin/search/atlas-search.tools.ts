import { AgentValidationError } from '../../../core/errors';
import { clampLimit } from '../../../format/applied-limits';
import type { SearchSpec } from '../../../ports/data-path';
import type { PolicedReader } from '../../read/policed-reader';
import { readTool } from '../../read/read-tool';
import { TRUNCATED_OUTPUT } from '../output-schemas';
import {
  APPLY_CANONICAL_FILTER_ARG,
  classArguments,
  classResult,
  KEYS_ARG,
  WHERE_ARG,
  type ClassArgumentsSchema,
} from '../tool-schemas';
import type { ArgumentsOf } from '../../schema-types';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const FACET_DEFAULT_LIMIT = 10;
const FACET_MAX_LIMIT = 50;

const COMMON_PROPERTIES = {
  query: { type: 'string', description: 'The words to look for.' },
  index: {
    type: 'string',
    description: 'The Atlas Search index to use (default "default").',
  },
  fuzzy: {
    type: 'integer',
    enum: [0, 1, 2],
    description:
      'Typo tolerance: 1 or 2 single-character edits per word; 0 or absent for exact words.',
  },
  where: WHERE_ARG,
  keys: KEYS_ARG,
  limit: {
    type: 'integer',
    minimum: 1,
    description: `Rows to return, best match first (default ${DEFAULT_LIMIT}, max ${MAX_LIMIT}).`,
  },
  apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
} as const;

const FIELDS_ARG = {
  type: 'array',
  items: { type: 'string' },
  minItems: 1,
  description: 'String fields to search in, e.g. ["title", "body"].',
} as const;

/** What every Atlas search tool takes: `class_name`, `query` and the properties above. */
type CommonArgs = ArgumentsOf<ClassArgumentsSchema<typeof COMMON_PROPERTIES, readonly ['query']>>;

const SEARCH_RESULT = classResult({
  index: { type: 'string' },
  query: { type: 'string' },
  count: { type: 'integer' },
  results: {
    type: 'array',
    items: { type: 'object' },
    description: 'Rows best match first; each carries _score, Atlas relevance (higher is better).',
  },
  applied_limits: { type: 'object' },
  _truncated: TRUNCATED_OUTPUT,
});

const DESCRIPTION_TAIL =
  ' Runs on MongoDB Atlas Search (needs an Atlas search index on the fields); rows come back best match first, each with _score, and only rows this agent may read.';

function fuzzyOf(value: unknown): 1 | 2 | undefined {
  if (value === undefined || value === 0) return undefined;
  if (value === 1 || value === 2) return value;
  throw new AgentValidationError('fuzzy: must be 0, 1 or 2 (edits tolerated per word).');
}

async function runSearch(
  read: PolicedReader,
  args: CommonArgs,
  spec: Pick<SearchSpec, 'mode' | 'paths' | 'facets'>,
  appliedElsewhere?: Record<string, unknown>,
) {
  await read.gate(args.class_name);
  if (!Array.isArray(spec.paths) || !spec.paths.every((p) => typeof p === 'string' && p)) {
    throw new AgentValidationError('fields: name the String fields to search, e.g. ["title"].');
  }
  const { value: limit, applied: limitApplied } = clampLimit(
    'limit',
    args.limit,
    DEFAULT_LIMIT,
    MAX_LIMIT,
  );
  const applied =
    limitApplied || appliedElsewhere ? { ...appliedElsewhere, ...limitApplied } : undefined;
  const index = args.index ?? 'default';
  const found = await read.search(args.class_name, {
    ...spec,
    index,
    query: args.query,
    fuzzyMaxEdits: fuzzyOf(args.fuzzy),
    where: args.where,
    keys: args.keys,
    applyCanonicalFilter: args.apply_canonical_filter,
    limit,
  });
  return {
    class_name: args.class_name,
    index,
    query: args.query,
    count: found.rows.length,
    results: found.rows.map(({ row, score }) => ({ ...row, _score: score })),
    ...(found.facets ? { facets: found.facets } : {}),
    ...(applied ? { applied_limits: applied } : {}),
  };
}

export const atlasTextSearch = readTool({
  name: 'atlas_text_search',
  description:
    'Full-text search of a class: rows whose fields contain the words (stemmed, any order).' +
    DESCRIPTION_TAIL,
  category: 'search',
  dataOperation: 'search',
  timeout: 30,
  oversize: 'trim-rows',
  inputSchema: classArguments({ fields: FIELDS_ARG, ...COMMON_PROPERTIES }, ['query', 'fields']),
  outputSchema: SEARCH_RESULT,
  handler: (args, { read }) => runSearch(read, args, { mode: 'text', paths: args.fields }),
});

export const atlasAutocomplete = readTool({
  name: 'atlas_autocomplete',
  description:
    'Search-as-you-type on one field: rows whose field starts with (or contains words starting with) what was typed. The field needs an autocomplete mapping in the Atlas index.' +
    DESCRIPTION_TAIL,
  category: 'search',
  dataOperation: 'search',
  timeout: 30,
  oversize: 'trim-rows',
  inputSchema: classArguments(
    {
      field: { type: 'string', description: 'The one field to complete, e.g. "name".' },
      ...COMMON_PROPERTIES,
    },
    ['query', 'field'],
  ),
  outputSchema: SEARCH_RESULT,
  handler: (args, { read }) => {
    if (typeof args.field !== 'string' || !args.field) {
      throw new AgentValidationError('field: name the one field to complete, e.g. "name".');
    }
    return runSearch(read, args, { mode: 'autocomplete', paths: [args.field] });
  },
});

export const atlasFacetedSearch = readTool({
  name: 'atlas_faceted_search',
  description:
    'Full-text search with counts per value of some fields among the matching rows (e.g. how many hits per status). Counts cover only rows this agent may read.' +
    DESCRIPTION_TAIL,
  category: 'search',
  dataOperation: 'search',
  timeout: 30,
  oversize: 'trim-rows',
  inputSchema: classArguments(
    {
      fields: FIELDS_ARG,
      facets: {
        type: 'array',
        items: { type: 'string' },
        minItems: 1,
        maxItems: 5,
        description: 'Fields to count values of among the matches, e.g. ["status"].',
      },
      facet_limit: {
        type: 'integer',
        minimum: 1,
        description: `Values per facet, most frequent first (default ${FACET_DEFAULT_LIMIT}, max ${FACET_MAX_LIMIT}).`,
      },
      ...COMMON_PROPERTIES,
    },
    ['query', 'fields', 'facets'],
  ),
  outputSchema: {
    ...SEARCH_RESULT,
    properties: {
      ...(SEARCH_RESULT.properties as Record<string, unknown>),
      facets: {
        type: 'object',
        description: 'Per facet field: [{ value, count }], most frequent first.',
      },
    },
  },
  handler: (args, { read }) => {
    if (!Array.isArray(args.facets) || args.facets.length === 0 || args.facets.length > 5) {
      throw new AgentValidationError('facets: name one to five fields to count, e.g. ["status"].');
    }
    const { value: facetLimit, applied } = clampLimit(
      'facet_limit',
      args.facet_limit,
      FACET_DEFAULT_LIMIT,
      FACET_MAX_LIMIT,
    );
    return runSearch(
      read,
      args,
      {
        mode: 'text',
        paths: args.fields,
        facets: { fields: args.facets, limit: facetLimit },
      },
      applied,
    );
  },
});
