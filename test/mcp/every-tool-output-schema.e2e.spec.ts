import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AgentMethod,
  AgentSearchable,
  LocalLexicalEmbedder,
  ParseAgentModule,
  ParseClass,
  SearchIndexer,
  type AgentMethodContext,
} from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { ENV_GATES } from 'nestjs-parse-agent/ops';
import { BUILTIN_TOOLS } from 'nestjs-parse-agent/tools/builtin/index';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { DataPathProvider } from 'nestjs-parse-agent';
import type { DataRow, SearchSpec } from 'nestjs-parse-agent/data';
import { createObject } from '../harness/fixtures';
import { testParseConfig, testParseConnection } from '../harness/parse-rest';

const suffix = randomBytes(4).toString('hex');
const NOTE = `SchemaNote${suffix}`;
const MISSING = `NoSuchClass${suffix}`;

@ParseClass(NOTE)
@AgentSearchable({ fields: ['title'], filterFields: ['status'] })
class SchemaNote {
  title!: string;

  @AgentMethod({
    permission: 'readonly',
    description: 'Says what the note is called.',
    supportsDryRun: true,
  })
  describe(_args: Record<string, never>, ctx: AgentMethodContext) {
    return ctx.dryRun ? { would_describe: ctx.objectId } : { title: this.title };
  }

  @AgentMethod({ permission: 'readonly', description: 'Returns nothing.' })
  touch() {
    return undefined;
  }
}

/**
 * No Atlas can run here: a STAND-IN provider serves only the `search` operation (so the Atlas
 * Search tools are offered and answer), reading rows through Parse REST and keeping those whose
 * searched fields contain the query. It checks the tools' result shapes, not Atlas.
 */
function atlasStandIn(defaults: DataPathProvider[]): DataPathProvider[] {
  const rest = defaults.find((p) => p.kind === 'parse-rest')!;
  const standIn: DataPathProvider = {
    kind: 'atlas-stand-in',
    refusal: (operation) => (operation === 'search' ? undefined : 'serves only search'),
    rank: () => 1,
    bind: (identity) => {
      const path = rest.bind(identity);
      return {
        ...path,
        kind: 'atlas-stand-in',
        search: async (className: string, spec: SearchSpec) => {
          const all = await path.find(className, { where: spec.where, limit: 1000 });
          const query = spec.query.toLowerCase();
          const hits = all.filter((row: DataRow) =>
            spec.paths.some((f) =>
              String(row[f] ?? '')
                .toLowerCase()
                .includes(query),
            ),
          );
          const facets = spec.facets
            ? Object.fromEntries(
                spec.facets.fields.map((f) => {
                  const counts = new Map<unknown, number>();
                  for (const row of hits) counts.set(row[f], (counts.get(row[f]) ?? 0) + 1);
                  return [f, [...counts].map(([value, count]) => ({ value, count }))];
                }),
              )
            : undefined;
          return {
            rows: hits.slice(0, spec.limit).map((row: DataRow) => ({ row, score: 1 })),
            ...(facets ? { facets } : {}),
          };
        },
      };
    },
  };
  return [...defaults, standIn];
}

interface Case {
  tool: string;
  label?: string;
  args: () => Record<string, unknown>;
  /** Part of the result that shows the case reached the branch of the schema it is there for. */
  shows?: Record<string, unknown>;
}

/**
 * The official MCP SDK client validates `structuredContent` against the tool's `outputSchema`
 * (cached by `listTools`) and throws when they disagree. Every built-in tool is called here through
 * that client, on its success shapes (and dry-run, format and null variants) and on a failure, so a
 * result that does not match its own schema fails the suite instead of a user's agent. Run as the
 * operator (master key, admin tier, every write switch on) with the direct PostgreSQL path, so each
 * tool answers instead of being refused by a gate.
 */
describe('every built-in tool’s result matches its outputSchema (official SDK client callTool)', () => {
  let app: INestApplication;
  let client: Client;
  const saved: Record<string, string | undefined> = {};
  const called = new Set<string>();
  let noteId: string;
  let createdId: string | undefined;
  const scratchClass = `SchemaScratch${suffix}`;

  beforeAll(async () => {
    for (const gate of Object.values(ENV_GATES)) {
      saved[gate] = process.env[gate];
      process.env[gate] = 'true';
    }
    noteId = await createObject(NOTE, {
      title: 'first',
      rank: 1,
      status: 'open',
      due: { __type: 'Date', iso: '2026-01-15T10:00:00.000Z' },
    });
    await createObject(NOTE, {
      title: 'second',
      rank: 2,
      status: 'done',
      due: { __type: 'Date', iso: '2026-02-15T10:00:00.000Z' },
    });
    await createObject(NOTE, { title: 'no status', rank: 3 });
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: [SchemaNote],
          unregisteredClasses: 'visible',
          suppressSecurityBanners: true,
          rateLimiter: { check: () => undefined },
          postgres: { uri: testParseConfig().databaseURI },
          dataPathProviders: atlasStandIn,
          analytics: { exposeExplain: true },
          embeddings: new LocalLexicalEmbedder(),
          agentFactory: () => ({
            permissions: 'admin',
            allowMutations: true,
            confirmationRequired: false,
          }),
          mcp: { path: '/mcp' },
        }),
      ],
    }).compile();
    // The notes' titles embedded, so semantic_search answers with chunks and documents.
    await moduleRef
      .get(SearchIndexer)
      .indexRows(NOTE, [{ objectId: noteId, title: 'first', status: 'open' }]);
    app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    client = new Client({ name: 'every-tool', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    // The client validates only tools it has listed: list first, as every real client does.
    await client.listTools();
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await app?.close();
    for (const [gate, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[gate];
      else process.env[gate] = value;
    }
  });

  const pipeline = [{ $match: { rank: { $gte: 1 } } }, { $limit: 5 }];

  /** Successful calls, in an order where each write finds what it needs. */
  const SUCCESSES: Case[] = [
    {
      tool: 'list_tools',
      args: () => ({}),
      shows: { categories: expect.objectContaining({ query: expect.any(String) as string }) },
    },
    { tool: 'list_tools', label: 'one category', args: () => ({ category: 'query' }) },
    { tool: 'get_all_schemas', args: () => ({}) },
    { tool: 'get_schema', args: () => ({ class_name: NOTE }) },
    { tool: 'query_class', args: () => ({ class_name: NOTE, order: 'rank', limit: 2 }) },
    { tool: 'query_class', label: 'csv', args: () => ({ class_name: NOTE, format: 'csv' }) },
    { tool: 'count_objects', args: () => ({ class_name: NOTE, where: { rank: { $gte: 2 } } }) },
    {
      tool: 'atlas_text_search',
      args: () => ({ class_name: NOTE, query: 'first', fields: ['title'] }),
      shows: { count: 1, results: [expect.objectContaining({ title: 'first', _score: 1 })] },
    },
    {
      tool: 'atlas_autocomplete',
      args: () => ({ class_name: NOTE, query: 'sec', field: 'title', limit: 500 }),
      shows: { applied_limits: expect.objectContaining({ limit: expect.any(Object) as object }) },
    },
    {
      tool: 'atlas_faceted_search',
      args: () => ({ class_name: NOTE, query: 's', fields: ['title'], facets: ['status'] }),
      shows: { facets: { status: expect.any(Array) as unknown[] } },
    },
    { tool: 'get_object', args: () => ({ class_name: NOTE, object_id: noteId }) },
    {
      tool: 'get_objects',
      args: () => ({ class_name: NOTE, ids: [noteId, 'zzzzzzzzzz'] }),
      shows: { missing: ['zzzzzzzzzz'] },
    },
    { tool: 'get_sample_objects', args: () => ({ class_name: NOTE, limit: 2 }) },
    {
      tool: 'explain_query',
      args: () => ({ class_name: NOTE, where: { status: 'open' } }),
      shows: { winning_plan: expect.any(Object) as object },
    },
    { tool: 'aggregate', args: () => ({ class_name: NOTE, pipeline }) },
    {
      tool: 'semantic_search',
      args: () => ({ class_name: NOTE, query: 'first', k: 3 }),
      shows: { documents: expect.any(Object) as object },
    },
    { tool: 'group_by', args: () => ({ class_name: NOTE, field: 'status' }) },
    {
      tool: 'group_by',
      label: 'sum, a null group',
      args: () => ({ class_name: NOTE, field: 'status', operation: 'sum', value_field: 'rank' }),
      shows: { groups: expect.arrayContaining([{ key: null, value: 3 }]) as unknown[] },
    },
    {
      tool: 'group_by',
      label: 'dry run',
      args: () => ({ class_name: NOTE, field: 'status', dry_run: true }),
      shows: { dry_run: true },
    },
    {
      tool: 'group_by_date',
      args: () => ({ class_name: NOTE, field: 'due', interval: 'month' }),
    },
    {
      tool: 'group_by_date',
      label: 'dry run',
      args: () => ({ class_name: NOTE, field: 'due', interval: 'month', dry_run: true }),
    },
    { tool: 'distinct', args: () => ({ class_name: NOTE, field: 'status' }) },
    {
      tool: 'distinct',
      label: 'dry run',
      args: () => ({ class_name: NOTE, field: 'status', dry_run: true }),
      shows: { dry_run: true },
    },
    { tool: 'export_data', args: () => ({ class_name: NOTE, order: 'rank' }) },
    {
      tool: 'export_data',
      label: 'pipeline mode',
      args: () => ({ class_name: NOTE, pipeline, format: 'markdown' }),
    },
    {
      tool: 'call_method',
      args: () => ({ class_name: NOTE, method_name: 'describe', object_id: noteId }),
    },
    {
      tool: 'call_method',
      label: 'dry run',
      args: () => ({
        class_name: NOTE,
        method_name: 'describe',
        object_id: noteId,
        arguments: { dry_run: true },
      }),
    },
    {
      tool: 'call_method',
      label: 'returns nothing',
      args: () => ({ class_name: NOTE, method_name: 'touch', object_id: noteId }),
      shows: { result: null },
    },
    { tool: 'create_object', args: () => ({ class_name: NOTE, values: { title: 'new' } }) },
    {
      tool: 'update_object',
      args: () => ({ class_name: NOTE, object_id: createdId, values: { title: 'renamed' } }),
    },
    { tool: 'delete_object', args: () => ({ class_name: NOTE, object_id: createdId }) },
    {
      tool: 'create_class',
      args: () => ({ class_name: scratchClass, fields: { label: { type: 'String' } } }),
    },
    { tool: 'delete_class', args: () => ({ class_name: scratchClass }) },
  ];

  it.each(SUCCESSES.map((c) => [c.label ? `${c.tool} (${c.label})` : c.tool, c] as const))(
    '%s: succeeds and the SDK client accepts its structuredContent',
    async (_label, { tool, args, shows }) => {
      // callTool throws (McpError: "Structured content does not match the tool's output schema")
      // when the result breaks its schema.
      const result = await client.callTool({ name: tool, arguments: args() });
      const text = (result.content as Array<{ text: string }>)[0].text;
      expect({ isError: result.isError, text }).toEqual({
        isError: false,
        text: expect.any(String) as string,
      });
      expect(result.structuredContent).toEqual(JSON.parse(unwrapUntrusted(text)));
      if (shows) expect(result.structuredContent).toMatchObject(shows);
      if (tool === 'create_object') {
        createdId = (result.structuredContent as { object_id: string }).object_id;
      }
      called.add(tool);
    },
  );

  const requiredArgs = (name: string) =>
    BUILTIN_TOOLS.find((tool) => tool.name === name)!.inputSchema.required as string[] | undefined;

  /** Every tool that names a class fails on a missing one; the failure must validate too. */
  it.each(
    BUILTIN_TOOLS.filter((tool) => requiredArgs(tool.name)?.includes('class_name'))
      // create_class on a missing class succeeds: its refusal is a class that exists.
      .filter((tool) => tool.name !== 'create_class')
      .map((tool) => [tool.name] as const),
  )('%s: a failure is a tool error the SDK client accepts', async (tool) => {
    const args: Record<string, unknown> = {
      class_name: MISSING,
      object_id: 'zzzzzzzzzz',
      ids: ['zzzzzzzzzz'],
      field: 'status',
      interval: 'month',
      pipeline,
      method_name: 'describe',
      values: { title: 'x' },
      query: 'x',
    };
    const result = await client.callTool({
      name: tool,
      arguments: Object.fromEntries(requiredArgs(tool)!.map((key) => [key, args[key]])),
    });
    expect(result.isError).toBe(true);
  });

  it('the cases above called every built-in tool, and the client listed them all', async () => {
    const builtins = BUILTIN_TOOLS.map((tool) => tool.name).sort();
    expect([...called].sort()).toEqual(builtins);
    const { tools } = await client.listTools();
    const listed = tools.map((tool) => tool.name);
    expect(builtins.filter((name) => !listed.includes(name))).toEqual([]);
    for (const name of builtins) {
      expect(tools.find((tool) => tool.name === name)?.outputSchema).toBeDefined();
    }
  });
});
