/**
 * The credential floor (INTERNAL_FIELDS, one list since issue 31) on every built-in read tool,
 * under the master key: a field of the list named in any argument is refused before any read,
 * and a path that returns the fields anyway (whole rows, pipeline output) has them stripped.
 * The class declares every field of the list and has no allowlist, so nothing but the floor
 * stands in the way.
 */
import 'reflect-metadata';
import { Aggregator, Query } from 'mingo';
import { inMemoryAgentServices } from '../../../../../test/fixtures/in-memory-agent';
import { ParseAgent } from '../../agent/parse-agent';
import { suppressSecurityBanners } from '../../core/security-banner';
import { DataRouter } from '../../data/data-router';
import { ParseClass } from '../../metadata/decorators/parse-class.decorator';
import { AgentSearchable } from '../../metadata/decorators/agent-searchable.decorator';
import { LocalLexicalEmbedder } from '../../ports/local-lexical-embedder';
import type { DataPath, DataPathProvider, DataRow } from '../../ports/data-path';
import { INTERNAL_FIELDS } from '../../query/internal-fields';
import { BUILTIN_TOOLS } from '../builtin';

@ParseClass('Account')
@AgentSearchable({ fields: ['status'], filterFields: ['amount'] })
class AccountModel {}

/** Every name of the list, and one per-provider column the prefix rule covers. */
const FLOOR = [...INTERNAL_FIELDS, '_auth_data_github'];
const marker = (field: string) => `LEAK-${FLOOR.indexOf(field)}-${field}`;

const accounts: DataRow[] = Array.from({ length: 4 }, (_, i) => ({
  objectId: `a${i + 1}`,
  createdAt: new Date(Date.UTC(2024, 0, i + 1)).toISOString(),
  status: i % 2 ? 'open' : 'paid',
  amount: (i + 1) * 10,
  placedAt: new Date(Date.UTC(2024, 0, i + 1)),
}));

/** Every floor field with a marker value: what a careless path would hand back. */
const leaked = (): DataRow => Object.fromEntries(FLOOR.map((f) => [f, marker(f)]));

interface Read {
  operation: string;
  request: unknown;
}

/** A path that answers everything with whole rows plus every floor field. */
function leakingPath(reads: Read[]): DataPath {
  const matching = (where: unknown) =>
    new Query((where ?? {}) as Record<string, unknown>).find(accounts).all() as DataRow[];
  return {
    kind: 'leaking',
    async find(_c, query) {
      reads.push({ operation: 'find', request: query });
      return matching(query.where)
        .slice(0, query.limit)
        .map((row) => ({ ...row, ...leaked() }));
    },
    async get(_c, objectId) {
      reads.push({ operation: 'get', request: objectId });
      const row = accounts.find((r) => r.objectId === objectId);
      return row && { ...row, ...leaked() };
    },
    async count(_c, where) {
      reads.push({ operation: 'count', request: where });
      return matching(where).length;
    },
    async aggregate(_c, pipeline) {
      reads.push({ operation: 'aggregate', request: pipeline });
      return (new Aggregator(pipeline).run(accounts) as DataRow[]).map((row) => ({
        ...row,
        ...leaked(),
      }));
    },
    async explain(_c, query) {
      reads.push({ operation: 'explain', request: query });
      return { winningPlan: 'IXSCAN', collectionScan: false, indexesUsed: [] };
    },
    async protectedFields() {
      return [];
    },
    async vectorSearch(_c, spec) {
      reads.push({ operation: 'vectorSearch', request: spec });
      const rows = matching(spec.where)
        .slice(0, spec.k)
        .map((row) => ({ ...row, ...leaked() }));
      return {
        chunks: rows.map((row) => ({
          objectId: String(row.objectId),
          chunk: 0,
          start: 0,
          end: 4,
          sourceHash: 'x',
          score: 0.5,
        })),
        rows,
        method: 'exact' as const,
      };
    },
    async search(_c, spec) {
      reads.push({ operation: 'search', request: spec });
      return {
        rows: matching(spec.where)
          .slice(0, spec.limit)
          .map((row) => ({ row: { ...row, ...leaked() }, score: 1 })),
      };
    },
    async groupBy(_c, spec) {
      reads.push({ operation: 'groupBy', request: spec });
      return [{ key: 'paid', value: 2 }];
    },
    async groupByDate(_c, spec) {
      reads.push({ operation: 'groupByDate', request: spec });
      return [{ key: '2024-01-01', value: 1 }];
    },
    async distinct(_c, spec) {
      reads.push({ operation: 'distinct', request: spec });
      return ['paid', 'open'];
    },
  };
}

function operatorAgent() {
  const fieldTypes = Object.fromEntries(FLOOR.map((f) => [f, 'String']));
  const memory = inMemoryAgentServices({
    schemas: {
      Account: { status: 'String', amount: 'Number', placedAt: 'Date', ...fieldTypes },
    },
    models: [AccountModel],
  });
  const reads: Read[] = [];
  const path = leakingPath(reads);
  const provider: DataPathProvider = {
    kind: 'leaking',
    refusal: () => undefined,
    bind: () => path,
  };
  const services = {
    ...memory.services,
    data: new DataRouter([provider]),
    retrieval: { embeddings: new LocalLexicalEmbedder({ dimensions: 16 }) },
  };
  // The master key: the floor holds for it too.
  return { agent: new ParseAgent({}, services), reads };
}

/** Calls that name no floor field: every row they return went through redaction. */
const PLAIN_CALLS: Array<[string, Record<string, unknown>]> = [
  ['query_class', {}],
  ['query_class', { format: 'csv' }],
  ['query_class', { format: 'markdown' }],
  ['query_class', { format: 'table' }],
  ['get_object', { object_id: 'a1' }],
  ['get_objects', { ids: ['a1', 'a2'] }],
  ['get_sample_objects', { limit: 3 }],
  ['aggregate', { pipeline: [{ $match: { status: 'paid' } }] }],
  ['export_data', { row_cap: 3 }],
  ['export_data', { pipeline: [{ $match: { status: 'paid' } }] }],
  ['atlas_text_search', { query: 'paid', fields: ['status'] }],
  ['semantic_search', { query: 'paid' }],
  ['atlas_faceted_search', { query: 'paid', fields: ['status'], facets: ['status'] }],
];

/** Every argument of every read tool that can name a field, naming `field`. */
function probes(field: string): Array<[string, Record<string, unknown>]> {
  return [
    ['query_class', { keys: [field] }],
    ['query_class', { where: { [field]: 'x' } }],
    ['query_class', { where: { $or: [{ status: 'paid' }, { [field]: { $exists: true } }] } }],
    ['query_class', { where: { [`${field}.inner`]: 'x' } }],
    ['query_class', { order: field }],
    ['query_class', { order: `status,-${field}` }],
    ['query_class', { include: [field] }],
    ['count_objects', { where: { [field]: { $exists: true } } }],
    ['get_object', { object_id: 'a1', include: [field] }],
    ['get_objects', { ids: ['a1'], include: [field] }],
    ['explain_query', { where: { [field]: 'x' } }],
    ['distinct', { field }],
    ['group_by', { field }],
    ['group_by', { field: 'status', where: { [field]: 'x' } }],
    ['group_by_date', { field, interval: 'day' }],
    ['aggregate', { pipeline: [{ $project: { [field]: 1 } }] }],
    ['aggregate', { pipeline: [{ $group: { _id: `$${field}` } }] }],
    ['aggregate', { pipeline: [{ $match: { [field]: 'x' } }] }],
    ['aggregate', { pipeline: [{ $sort: { [field]: 1 } }] }],
    ['aggregate', { pipeline: [{ $addFields: { copy: `$${field}` } }] }],
    ['export_data', { keys: [field] }],
    ['export_data', { columns: [field] }],
    ['export_data', { where: { [field]: 'x' } }],
    ['export_data', { pipeline: [{ $project: { [field]: 1 } }] }],
    ['atlas_text_search', { query: 'x', fields: [field] }],
    ['atlas_text_search', { query: 'x', fields: ['status'], keys: [field] }],
    ['atlas_autocomplete', { query: 'x', field }],
    ['semantic_search', { query: 'x', text_field: field }],
    ['semantic_search', { query: 'x', where: { [field]: 'x' } }],
    ['atlas_faceted_search', { query: 'x', fields: ['status'], facets: [field] }],
  ];
}

const readTools = BUILTIN_TOOLS.filter((tool) => tool.annotations?.readOnlyHint === true);
/** Read tools that take no field at all (they list tools, schemas or sample rows). */
const NO_FIELD_ARGUMENT = ['list_tools', 'get_all_schemas', 'get_schema', 'get_sample_objects'];

beforeAll(() => suppressSecurityBanners());

describe('the credential floor on every read tool', () => {
  it('probes every read tool that takes a field (a new one without a probe fails here)', () => {
    const probed = new Set(probes('x').map(([tool]) => tool));
    const missing = readTools
      .map((tool) => tool.name)
      .filter((name) => !probed.has(name) && !NO_FIELD_ARGUMENT.includes(name));
    expect(missing).toEqual([]);
  });

  it.each(FLOOR)('refuses %s in every argument before anything is read', async (field) => {
    for (const [tool, args] of probes(field)) {
      const { agent, reads } = operatorAgent();
      const result = await agent.execute(tool, { class_name: 'Account', ...args });
      expect({ tool, args, success: result.success }).toEqual({ tool, args, success: false });
      expect({ tool, args, reads }).toEqual({ tool, args, reads: [] });
      expect(JSON.stringify(result)).not.toContain('LEAK-');
    }
  });

  it.each(PLAIN_CALLS)('strips every floor field from what %s returns', async (tool, args) => {
    const { agent, reads } = operatorAgent();
    const result = await agent.execute(tool, { class_name: 'Account', ...args });
    expect(result).toMatchObject({ success: true });
    // The path was asked and answered with every floor field: none came through.
    expect(reads.length).toBeGreaterThan(0);
    expect(JSON.stringify(result)).not.toContain('LEAK-');
  });
});
