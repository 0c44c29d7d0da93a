/**
 * Holds every built-in read tool to the policed reader: declared with readTool (so its handler
 * gets no data path), every read the data path sees carries the agent's planned scope, and
 * nothing the path over-answers (internal fields, ACLs, hidden classes, fields outside the
 * allowlist) reaches the result.
 */
import 'reflect-metadata';
import { Aggregator, Query } from 'mingo';
import { inMemoryAgentServices } from '../../../../../test/fixtures/in-memory-agent';
import { ParseAgent } from '../../agent/parse-agent';
import { ParseAgentConfigError } from '../../core/errors';
import { suppressSecurityBanners } from '../../core/security-banner';
import { DataRouter } from '../../data/data-router';
import { AgentFields } from '../../metadata/decorators/agent-fields.decorators';
import { AgentHidden } from '../../metadata/decorators/agent-hidden.decorator';
import { AgentSearchable } from '../../metadata/decorators/agent-searchable.decorator';
import { LocalLexicalEmbedder } from '../../ports/local-lexical-embedder';
import { textHash } from '../../retrieval/chunker';
import { ParseClass } from '../../metadata/decorators/parse-class.decorator';
import type { DataPath, DataPathProvider, DataRow } from '../../ports/data-path';
import { BUILTIN_TOOLS } from '../builtin';
import { DEFAULT_ANALYTICS_SETTINGS, type ToolContext } from '../tool-context';
import { isReadTool, readTool } from './read-tool';

@ParseClass('Order')
@AgentFields('status', 'amount', 'region', 'placedAt', 'buyer', 'payslip')
@AgentSearchable({ fields: ['status'], filterFields: ['amount'] })
class OrderModel {}

@ParseClass('Customer')
@AgentFields('region', 'status')
class CustomerModel {}

@ParseClass('Payroll')
@AgentHidden()
class PayrollModel {}

/** The operator's filter every read of this agent must carry: proof the read was planned. */
const SCOPE = 'SCOPE-MARKER';

/** What a path over-answers; none of it may reach an agent. */
const LEAKS = {
  _hashed_password: 'LEAK-hash',
  _rperm: ['LEAK-rperm'],
  ACL: { 'LEAK-acl': { read: true } },
  payee: { __type: 'Pointer', className: 'Payroll', objectId: 'LEAK-pointer' },
};
/**
 * A pointer column (Order.payslip -> Payroll, allowlisted) in Parse-on-Mongo storage form: only
 * the schema says this string is a pointer, so row reads must redact it by the schema.
 */
const STORED_POINTER = { payslip: 'Payroll$LEAK-string' };
/** Text that merely looks like "Class$id": data, which must come back exactly as stored. */
const LOOKALIKE = 'Payroll$NOT-A-POINTER';
/** A field outside Order's allowlist: row reads must cut it even when the path returns it. */
const UNLISTED = { salary: 'LEAK-salary' };

const orders: DataRow[] = Array.from({ length: 6 }, (_, i) => ({
  objectId: `o${i + 1}`,
  createdAt: new Date(Date.UTC(2024, 0, i + 1)).toISOString(),
  status: i % 2 ? 'open' : 'paid',
  amount: (i + 1) * 10,
  region: SCOPE,
  placedAt: new Date(Date.UTC(2024, 0, i + 1)),
  // The path answers every class with these rows: a joined "Customer" is one of them.
  buyer: { __type: 'Pointer', className: 'Customer', objectId: `o${((i + 1) % 6) + 1}` },
}));

interface Read {
  operation: string;
  /** What the path received: its where, pipeline or spec. */
  request: unknown;
}

/**
 * A path that answers every operation, ignores keys (returns whole rows) and adds what a careless
 * path might: only the reader's planning and redaction stand between it and the agent.
 */
function overAnsweringPath(reads: Read[], natives: boolean): DataPath {
  const matching = (where: unknown) =>
    new Query((where ?? {}) as Record<string, unknown>).find(orders).all() as DataRow[];
  const leaky = (row: DataRow) => ({ ...row, ...LEAKS, ...STORED_POINTER, ...UNLISTED });
  const path: DataPath = {
    kind: 'over-answering',
    async find(_className, query) {
      // The reader joins included classes itself: a path is never asked to expand them.
      if (query.include?.length) throw new Error('LEAK: a data path was asked to expand include');
      reads.push({ operation: 'find', request: query.where });
      return matching(query.where).slice(0, query.limit).map(leaky);
    },
    async get(_className, objectId, query) {
      if (query.include?.length) throw new Error('LEAK: a data path was asked to expand include');
      reads.push({ operation: 'get', request: objectId });
      const row = orders.find((r) => r.objectId === objectId);
      return row && leaky(row);
    },
    async count(_className, where) {
      reads.push({ operation: 'count', request: where });
      return matching(where).length;
    },
    async aggregate(_className, pipeline) {
      reads.push({ operation: 'aggregate', request: pipeline });
      const rows = new Aggregator(pipeline).run(orders) as DataRow[];
      // No allowlist applies to pipeline output (its projection is in the pipeline): only the
      // fields redaction always removes are added here.
      return rows.map((row) => ({ ...row, ...LEAKS }));
    },
    async explain(_className, query) {
      reads.push({ operation: 'explain', request: query.where });
      return { winningPlan: 'IXSCAN', collectionScan: false, indexesUsed: [] };
    },
    async protectedFields() {
      return [];
    },
    async vectorSearch(_className, spec) {
      reads.push({ operation: 'vectorSearch', request: spec.where });
      const rows: DataRow[] = matching(spec.where).slice(0, spec.k).map(leaky);
      return {
        chunks: rows.map((row, i) => ({
          objectId: String(row.objectId),
          chunk: 0,
          start: 0,
          end: 4,
          sourceHash: textHash(String(row.status)),
          score: 1 - i / 10,
        })),
        rows,
        method: 'exact' as const,
      };
    },
    async search(_className, spec) {
      reads.push({ operation: 'search', request: spec.where });
      const rows = matching(spec.where).slice(0, spec.limit).map(leaky);
      return {
        rows: rows.map((row) => ({ row, score: 1.5 })),
        ...(spec.facets
          ? {
              facets: Object.fromEntries(
                spec.facets.fields.map((f) => [
                  f,
                  [
                    { value: 'paid', count: 3 },
                    { value: LEAKS.payee, count: 1 },
                    { value: LOOKALIKE, count: 1 },
                  ],
                ]),
              ),
            }
          : {}),
      };
    },
  };
  if (natives) {
    const groups = async (operation: string, spec: { where?: unknown }) => {
      reads.push({ operation, request: spec.where });
      return [
        { key: 'paid', value: 3 },
        { key: LEAKS.payee, value: 1 },
        { key: LOOKALIKE, value: 1 },
      ];
    };
    path.groupBy = (_c, spec) => groups('groupBy', spec);
    path.groupByDate = (_c, spec) => groups('groupByDate', spec);
    path.distinct = async (_c, spec) => {
      reads.push({ operation: 'distinct', request: spec.where });
      return ['paid', LEAKS.payee, LOOKALIKE];
    };
  }
  return path;
}

function agentOver(natives: boolean) {
  const memory = inMemoryAgentServices({
    schemas: {
      Order: {
        status: 'String',
        amount: 'Number',
        region: 'String',
        placedAt: 'Date',
        salary: 'String',
        buyer: { type: 'Pointer', targetClass: 'Customer' },
        payslip: { type: 'Pointer', targetClass: 'Payroll' },
      },
      Customer: { region: 'String', status: 'String', salary: 'String' },
      Payroll: { amount: 'Number' },
    },
    models: [OrderModel, CustomerModel, PayrollModel],
  });
  const reads: Read[] = [];
  const path = overAnsweringPath(reads, natives);
  const provider: DataPathProvider = {
    kind: 'over-answering',
    refusal: () => undefined,
    bind: () => path,
  };
  const services = {
    ...memory.services,
    data: new DataRouter([provider]),
    retrieval: { embeddings: new LocalLexicalEmbedder({ dimensions: 16 }) },
  };
  const agent = new ParseAgent({ filters: { default: { region: SCOPE } } }, services);
  return { agent, reads };
}

/**
 * A call that reads data, for every built-in read tool. A read tool added without a call here
 * fails the coverage test below: each one is held to the same checks.
 */
const CALLS: Record<string, Record<string, unknown>[]> = {
  list_tools: [{}],
  get_all_schemas: [{}],
  get_schema: [{ class_name: 'Order' }],
  query_class: [
    { class_name: 'Order', where: { status: 'paid' } },
    { class_name: 'Order', format: 'csv', order: '-amount' },
    { class_name: 'Order', include: ['buyer'] },
    { class_name: 'Order', include: ['buyer.buyer'], keys: ['status', 'buyer.status'] },
  ],
  count_objects: [{ class_name: 'Order', where: { status: 'paid' } }],
  get_object: [
    { class_name: 'Order', object_id: 'o1' },
    { class_name: 'Order', object_id: 'o1', include: ['buyer'] },
  ],
  get_objects: [
    { class_name: 'Order', ids: ['o1', 'o2'] },
    { class_name: 'Order', ids: ['o1', 'o2'], include: ['buyer'] },
  ],
  get_sample_objects: [{ class_name: 'Order', limit: 3 }],
  explain_query: [{ class_name: 'Order', where: { status: 'paid' } }],
  aggregate: [
    { class_name: 'Order', pipeline: [{ $match: { status: 'paid' } }] },
    {
      class_name: 'Order',
      pipeline: [{ $group: { _id: '$status', n: { $sum: 1 } } }],
      compact_pointers: false,
    },
  ],
  group_by: [
    { class_name: 'Order', field: 'status' },
    { class_name: 'Order', field: 'status', sort: 'key_asc' },
  ],
  group_by_date: [
    { class_name: 'Order', field: 'placedAt', interval: 'month' },
    { class_name: 'Order', field: 'placedAt', interval: 'day', sort: 'value_desc' },
  ],
  distinct: [
    { class_name: 'Order', field: 'status', sort: 'asc' },
    { class_name: 'Order', field: 'status', flatten_arrays: true },
  ],
  atlas_text_search: [{ class_name: 'Order', query: 'paid', fields: ['status'], keys: ['amount'] }],
  atlas_autocomplete: [{ class_name: 'Order', query: 'pa', field: 'status', fuzzy: 1 }],
  semantic_search: [
    { class_name: 'Order', query: 'paid' },
    { class_name: 'Order', query: 'open', where: { amount: { $gte: 20 } }, k: 3 },
  ],
  atlas_faceted_search: [
    { class_name: 'Order', query: 'paid', fields: ['status'], facets: ['status', 'region'] },
  ],
  export_data: [
    { class_name: 'Order', row_cap: 2 },
    { class_name: 'Order', include: ['buyer'], columns: ['status', 'buyer.status'] },
    { class_name: 'Order', pipeline: [{ $match: { status: 'paid' } }], format: 'markdown' },
  ],
};

const readTools = BUILTIN_TOOLS.filter((tool) => tool.annotations?.readOnlyHint === true);

beforeAll(() => suppressSecurityBanners());

describe('built-in read tools', () => {
  it('are every read-only built-in tool, each declared with readTool (no raw data path)', () => {
    expect(readTools.map((t) => t.name).sort()).toEqual(Object.keys(CALLS).sort());
    const raw = readTools.filter((tool) => !isReadTool(tool)).map((t) => t.name);
    expect(raw).toEqual([]);
    // The rest change data and are declared as such.
    const others = BUILTIN_TOOLS.filter((tool) => !readTools.includes(tool));
    expect(others.every((t) => t.annotations?.readOnlyHint === false)).toBe(true);
    expect(others.some(isReadTool)).toBe(false);
  });

  it('join included pointers through planned reads of the joined class (the include calls are not vacuous)', async () => {
    const { agent, reads } = agentOver(false);
    const result = await agent.execute('query_class', { class_name: 'Order', include: ['buyer'] });
    const rows = (result as { data: { results: Array<Record<string, unknown>> } }).data.results;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.buyer).toEqual({
        className: 'Customer',
        objectId: expect.any(String),
        createdAt: expect.any(String),
        region: SCOPE,
        status: expect.any(String),
      });
    }
    expect(reads.filter((r) => r.operation === 'find')).toHaveLength(2);
  });

  it('stay policed once registered (the registry copies definitions, not handlers)', () => {
    const { agent } = agentOver(true);
    const registry = (agent as unknown as { services: { tools: { get(n: string): never } } })
      .services.tools;
    for (const tool of readTools) expect(isReadTool(registry.get(tool.name))).toBe(true);
  });

  describe.each([
    ['a path with its own group-by and distinct', true],
    ['a path that runs only pipelines', false],
  ])('on %s', (_label, natives) => {
    it.each(Object.keys(CALLS))(
      '%s reads only what the policy planned and returns only redacted rows',
      async (name) => {
        for (const args of CALLS[name]) {
          const { agent, reads } = agentOver(natives);
          const result = await agent.execute(name, args);
          expect(result).toMatchObject({ success: true });
          const text = JSON.stringify(result);
          expect(text).not.toContain('LEAK');
          for (const read of reads) {
            // Explain returns a plan, never rows; every other read carries the agent's filter.
            if (read.operation === 'explain' || read.operation === 'get') continue;
            expect({ ...read, planned: JSON.stringify(read.request).includes(SCOPE) }).toEqual({
              ...read,
              planned: true,
            });
          }
        }
      },
    );

    it('the calls above really read (the checks are not vacuous)', async () => {
      const seen = new Set<string>();
      for (const [name, calls] of Object.entries(CALLS)) {
        for (const args of calls) {
          const { agent, reads } = agentOver(natives);
          await agent.execute(name, args);
          for (const read of reads) seen.add(read.operation);
        }
      }
      const expected = ['find', 'count', 'aggregate', 'explain', 'search', 'vectorSearch'];
      if (natives) expected.push('groupBy', 'groupByDate', 'distinct');
      expect([...seen].sort()).toEqual(expect.arrayContaining(expected.sort()));
    });
  });
});

describe('values that only look like "Class$id"', () => {
  it.each(['group_by', 'group_by_date', 'distinct', 'atlas_faceted_search'])(
    '%s returns them exactly as stored',
    async (name) => {
      const { agent } = agentOver(true);
      const text = JSON.stringify(await agent.execute(name, CALLS[name][0]));
      expect(text).toContain(JSON.stringify(LOOKALIKE));
    },
  );
});

describe('readTool', () => {
  const context = (): ToolContext => {
    const { agent } = agentOver(false);
    const access = (agent as unknown as { access: ToolContext['access'] }).access;
    const path = overAnsweringPath([], false);
    return {
      agent,
      access,
      data: path,
      dataFor: () => path,
      writeData: path,
      timeoutMs: 10_000,
      analytics: DEFAULT_ANALYTICS_SETTINGS,
      signal: new AbortController().signal,
      reportProgress: () => undefined,
      confirm: async () => ({ confirmed: false }),
      audit: () => undefined,
    };
  };

  it('hands the handler no raw data path: reaching for one throws, with what to use instead', async () => {
    for (const member of ['data', 'dataFor', 'writeData', 'confirm', 'audit']) {
      const sneaky = readTool({
        name: 'sneaky',
        description: 'reads around the policy',
        inputSchema: { type: 'object' },
        category: 'query',
        handler: (_args, ctx) => (ctx as unknown as Record<string, unknown>)[member],
      });
      const reached = Promise.resolve().then(() => sneaky.handler({}, context()));
      if (member === 'confirm' || member === 'audit') {
        await expect(reached).resolves.toBeUndefined();
      } else {
        await expect(reached).rejects.toThrow(ParseAgentConfigError);
        await expect(reached).rejects.toThrow(/read tools read through context\.read/);
      }
    }
  });

  it('refuses a raw path at compile time too', () => {
    readTool({
      name: 'typed',
      description: 'compile-time check',
      inputSchema: { type: 'object' },
      category: 'query',
      handler: (_args, ctx) => {
        // @ts-expect-error a read tool's context has no data path
        void ctx.data;
        // @ts-expect-error nor the router's paths per operation
        void ctx.dataFor;
        // @ts-expect-error nor the write path
        void ctx.writeData;
        return ctx.read;
      },
    });
    expect(true).toBe(true);
  });

  it('keeps no way from the reader back to its paths', () => {
    const tool = readTool({
      name: 'probe',
      description: 'looks at what the reader exposes',
      inputSchema: { type: 'object' },
      category: 'query',
      handler: (_args, ctx) => ({
        own: Object.getOwnPropertyNames(ctx.read),
        enumerable: Object.keys(ctx),
      }),
    });
    const shown = tool.handler({}, context()) as { own: string[]; enumerable: string[] };
    expect(shown.own).toEqual([]);
    expect(shown.enumerable).not.toEqual(expect.arrayContaining(['data']));
    expect(shown.enumerable).not.toContain('dataFor');
    expect(shown.enumerable).not.toContain('writeData');
  });
});
