import { AgentValidationError } from '../../../core/errors';
import { clampLimit, type AppliedLimit } from '../../../format/applied-limits';
import type { MetadataRegistry } from '../../../metadata/metadata-registry';
import { checkSearchWhere } from '../../../retrieval/searchable-where';
import { readTool } from '../../read/read-tool';
import { classArguments, classResult } from '../tool-schemas';
import { semanticResult } from './semantic-search-result';
import { fuseChunks } from '../../../retrieval/hybrid-fusion';

const DEFAULT_K = 5;
const MAX_K = 20;
const DEFAULT_CHUNKS_PER_DOCUMENT = 3;
const DEFAULT_MAX_TOTAL_TOKENS = 20_000;

/**
 * Whether any registered class is @AgentSearchable: the tool is offered only then. `@AgentVisible`
 * is not access control, so it does not decide here; whether this agent may read the class is the
 * class gate's answer when the tool is called.
 */
export function anySearchableClass(metadata: MetadataRegistry): boolean {
  return metadata.all().some((m) => m.searchable !== undefined);
}

const RESULT = classResult({
  query: { type: 'string' },
  text_field: { type: 'string' },
  method: {
    type: 'string',
    description:
      'exact (a scan of every allowed chunk), hnsw (pgvector index, approximate), atlas (MongoDB Atlas Vector Search, approximate) or bounded (Parse REST: only the newest candidate_bound rows were considered).',
  },
  approximate: {
    type: 'boolean',
    description:
      'true for hnsw and atlas: an approximate nearest-neighbour search, which may miss some of the closest passages; false for exact and bounded (exact over the rows considered).',
  },
  ef_search: {
    type: 'integer',
    description: 'hnsw only: the index search width used (wider finds more of the true nearest).',
  },
  candidates_considered: {
    type: 'integer',
    description: 'bounded only: rows read and ranked.',
  },
  candidate_bound: { type: 'integer', description: 'bounded only: the most rows read.' },
  candidates_complete: {
    type: 'boolean',
    description:
      'bounded only: false when the class holds more matching rows than were considered.',
  },
  count: { type: 'integer', description: 'Chunks returned.' },
  chunks: {
    type: 'array',
    items: { type: 'object' },
    description:
      'Best first: object_id, chunk (position in the text), score (cosine, higher is closer), content.',
  },
  documents: {
    type: 'object',
    description: 'The parent rows by objectId, once each (without the searched text field).',
  },
  scores: { type: 'string', description: 'exact, or quantized (two decimals).' },
  budget_truncated: { type: 'boolean' },
  budget_dropped: { type: 'integer' },
  applied_limits: { type: 'object' },
});

export const semanticSearch = readTool({
  name: 'semantic_search',
  description:
    "Finds the passages of a class's text fields closest to a query (by embedding similarity), among rows this agent may read. Only classes marked searchable. Returns chunks best first with scores, and each parent row once in `documents`. `where` may use the class's filter fields only.",
  category: 'search',
  dataOperation: 'vector_search',
  timeout: 30,
  available: anySearchableClass,
  inputSchema: classArguments(
    {
      query: { type: 'string', minLength: 1, description: 'What to look for, in plain words.' },
      k: {
        type: 'integer',
        minimum: 1,
        description: `Documents to return, best first (default ${DEFAULT_K}, max ${MAX_K}).`,
      },
      where: {
        type: 'object',
        description:
          'Constraints on the class\'s filter fields only (get_schema shows them), e.g. {"status": "open"}.',
      },
      text_field: {
        type: 'string',
        description: 'Which searchable text field to search (default: the first one declared).',
      },
      max_chunks_per_document: {
        type: 'integer',
        minimum: 1,
        description: `Best passages returned per document (default ${DEFAULT_CHUNKS_PER_DOCUMENT}).`,
      },
      mode: {
        type: 'string',
        enum: ['vector', 'hybrid'],
        description:
          'vector (default): by embedding similarity. hybrid: also by keywords (full-text), the two rankings fused by reciprocal rank (scores are then fusion scores).',
      },
      max_total_tokens: {
        type: 'integer',
        minimum: 0,
        description: `Ceiling on the passages' estimated tokens (default ${DEFAULT_MAX_TOTAL_TOKENS}; 0: none). The lowest-ranked passages are dropped first, and the result says so.`,
      },
    },
    ['query'],
  ),
  outputSchema: RESULT,
  handler: async (args, { read, agent, access, retrieval, signal }) => {
    await read.gate(args.class_name);
    const searchable = access.meta(args.class_name)?.searchable;
    if (!searchable) {
      const others = access.metadata
        .all()
        .filter((m) => m.searchable && !access.isDenied(m.className))
        .map((m) => m.className);
      throw new AgentValidationError(
        `${args.class_name} is not searchable by meaning.${others.length ? ` Searchable classes: ${others.join(', ')}.` : ''}`,
      );
    }
    if (typeof args.query !== 'string' || !args.query.trim()) {
      throw new AgentValidationError('query: give the words to look for.');
    }
    const textField = args.text_field ?? searchable.fields[0];
    if (!searchable.fields.includes(textField)) {
      throw new AgentValidationError(
        `text_field: '${String(textField)}' is not searchable; ${args.class_name} searches ${searchable.fields.map((f) => `'${f}'`).join(', ')}.`,
      );
    }
    const where = checkSearchWhere(args.where, args.class_name, searchable.filterFields);
    const applied: Record<string, AppliedLimit> = {};
    const k = clampLimit('k', args.k, DEFAULT_K, MAX_K);
    const perDoc = clampLimit(
      'max_chunks_per_document',
      args.max_chunks_per_document,
      DEFAULT_CHUNKS_PER_DOCUMENT,
      searchable.chunk.maxPerDocument,
    );
    Object.assign(applied, k.applied, perDoc.applied);
    const maxTotalTokens = args.max_total_tokens ?? DEFAULT_MAX_TOTAL_TOKENS;
    if (!retrieval) {
      throw new AgentValidationError(
        'semantic_search is not set up on this server: set `embeddings` in ParseAgentModule.forRoot.',
      );
    }
    const vector = await retrieval.embedQuery(args.query, agent, signal);
    const hybrid = args.mode === 'hybrid';
    const found = await read.vectorSearch(
      args.class_name,
      {
        field: textField,
        vector,
        text: args.query,
        where,
        // Hybrid: more vector candidates, so fusion can promote keyword matches among them.
        k: hybrid ? Math.min(k.value * 3, MAX_K * 3) : k.value,
        maxChunksPerDocument: perDoc.value,
        mode: hybrid ? 'hybrid' : 'vector',
        candidateLimit: retrieval.candidateLimit,
      },
      // Parse REST only: no stored vectors, so the bounded candidates are embedded on the fly.
      (texts) => retrieval.embedTexts(texts, agent, signal),
    );
    // Fused scores are ranks, not similarities: nothing to quantize.
    const quantize = !hybrid && agent.permissions !== 'admin';
    const chunks = hybrid
      ? fuseChunks(found.chunks, found.keywordChunks ?? [], k.value, perDoc.value)
      : found.chunks;
    const parts = semanticResult({
      chunks,
      rows: found.rows,
      textField,
      quantize,
      maxTotalTokens,
    });
    return {
      class_name: args.class_name,
      query: args.query,
      text_field: textField,
      method: hybrid ? `${found.method}+fulltext` : found.method,
      ...approximationOf(found.method, found.searchWidth),
      count: parts.chunks.length,
      chunks: parts.chunks,
      documents: parts.documents,
      scores: hybrid ? 'rrf' : quantize ? 'quantized' : 'exact',
      ...(parts.budget
        ? {
            budget_truncated: true,
            budget_dropped: parts.budget.dropped,
            budget_note: `max_total_tokens (${maxTotalTokens}) dropped the ${parts.budget.dropped} lowest-ranked passage(s); raise it or lower k to see them.`,
          }
        : {}),
      ...candidatesOf(found.candidates),
      ...(Object.keys(applied).length ? { applied_limits: applied } : {}),
    };
  },
});

/** Whether the ranking was exact, said in the result: an index search is approximate. */
export function approximationOf(
  method: string,
  searchWidth: number | undefined,
): Record<string, unknown> {
  if (method === 'hnsw') {
    return {
      approximate: true,
      ...(searchWidth ? { ef_search: searchWidth } : {}),
      search_note: `Approximate nearest-neighbour search (pgvector HNSW${searchWidth ? `, ef_search ${searchWidth}` : ''}): some of the closest passages may be missing.`,
    };
  }
  if (method === 'atlas') {
    return {
      approximate: true,
      search_note:
        'Approximate nearest-neighbour search (MongoDB Atlas Vector Search): some of the closest passages may be missing.',
    };
  }
  return { approximate: false };
}

/** What a bounded (Parse REST) search considered, said in the result: never plausibly complete. */
function candidatesOf(
  candidates: { scanned: number; limit: number; exhausted: boolean } | undefined,
): Record<string, unknown> {
  if (!candidates) return {};
  const { scanned, limit, exhausted } = candidates;
  return {
    candidates_considered: scanned,
    candidate_bound: limit,
    candidates_complete: exhausted,
    candidates_note: exhausted
      ? `All ${scanned} matching row(s) this agent may read were considered (bound ${limit}).`
      : `Only the newest ${scanned} matching rows were considered (the bound is ${limit}); older rows were not searched. Narrow with where, or configure a direct database path for a complete search.`,
  };
}
