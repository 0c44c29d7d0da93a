import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AgentSearchable,
  LocalLexicalEmbedder,
  ParseAgentFactory,
  ParseAgentModule,
  ParseClass,
  SearchIndexer,
} from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/core/untrusted-data';
import { BUILTIN_TOOLS } from 'nestjs-parse-agent/tools/builtin/index';
import { isReadTool } from 'nestjs-parse-agent/tools/read/read-tool';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { atlasStandIn } from '../fixtures/atlas-stand-in';
import { createObject } from '../harness/fixtures';
import { testParseConfig, testParseConnection } from '../harness/parse-rest';

const suffix = randomBytes(4).toString('hex');
const NOTE = `SourceNote${suffix}`;

@ParseClass(NOTE)
@AgentSearchable({ fields: ['title'] })
class SourceNote {}

interface Case {
  tool: string;
  label?: string;
  args: () => Record<string, unknown>;
  /** The result carries rows (so at least one stamp); false: figures or schemas only. */
  rows: boolean;
  /** The rows come as text (csv, markdown): the stamp is a column. */
  text?: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every object in a result that carries `_source`, with the stamp. */
function stamped(value: Json, out: Array<{ row: Record<string, Json>; source: Json }> = []) {
  if (Array.isArray(value)) for (const item of value) stamped(item, out);
  else if (value && typeof value === 'object') {
    if ('_source' in value) out.push({ row: value, source: value._source });
    for (const [key, item] of Object.entries(value)) if (key !== '_source') stamped(item, out);
  }
  return out;
}

/** The result with every `_source` removed: what an agent without provenance gets. */
function unstamped(value: Json): Json {
  if (Array.isArray(value)) return value.map(unstamped);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== '_source')
        .map(([key, item]) => [key, unstamped(item)]),
    );
  return value;
}

/**
 * Issue 36 item 3: with `sourceProvenance: true`, every row every read tool returns carries
 * `_source: { class, tool, objectId }`, and nothing else changes. The cases are checked to cover
 * every built-in read tool (a new read tool fails this suite until it has a case); each runs twice
 * through the official MCP SDK client (which validates structuredContent against the tool's output
 * schema), with provenance off and on, on the real Parse Server and PostgreSQL path.
 */
describe('source provenance on every read tool', () => {
  let app: INestApplication;
  let plain: Client;
  let cited: Client;
  let ids: string[];

  beforeAll(async () => {
    ids = [];
    for (const [rank, title, status] of [
      [1, 'first', 'open'],
      [2, 'second', 'done'],
      [3, 'third', 'open'],
    ] as const) {
      ids.push(
        await createObject(NOTE, {
          title,
          rank,
          status,
          secret: `s-${rank}`,
          due: { __type: 'Date', iso: `2026-0${rank}-15T10:00:00.000Z` },
        }),
      );
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: [SourceNote],
          unregisteredClasses: 'visible',
          suppressSecurityBanners: true,
          startupCheck: 'off',
          rateLimiter: { check: () => undefined },
          postgres: { uri: testParseConfig().databaseURI },
          dataPathProviders: atlasStandIn,
          analytics: { exposeExplain: true },
          embeddings: new LocalLexicalEmbedder(),
          agentFactory: (request) => ({
            permissions: 'readonly',
            sourceProvenance: request.headers['x-test-provenance'] === 'on',
          }),
          mcp: { path: '/mcp' },
        }),
      ],
    }).compile();
    // The titles embedded, so semantic_search returns the notes as documents.
    await moduleRef.get(SearchIndexer).indexRows(
      NOTE,
      ids.map((objectId, i) => ({ objectId, title: ['first', 'second', 'third'][i] })),
    );
    app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const connect = async (provenance: string) => {
      const client = new Client({ name: `provenance-${provenance}`, version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers: { 'x-test-provenance': provenance } },
        }),
      );
      await client.listTools();
      return client;
    };
    plain = await connect('off');
    cited = await connect('on');
  }, 60_000);

  afterAll(async () => {
    await plain?.close();
    await cited?.close();
    await app?.close();
  });

  const pipeline = [{ $match: { rank: { $gte: 1 } } }, { $sort: { rank: 1 } }, { $limit: 5 }];
  const CASES: Case[] = [
    { tool: 'list_tools', args: () => ({}), rows: false },
    { tool: 'get_all_schemas', args: () => ({}), rows: false },
    { tool: 'get_schema', args: () => ({ class_name: NOTE }), rows: false },
    { tool: 'count_objects', args: () => ({ class_name: NOTE }), rows: false },
    {
      tool: 'explain_query',
      args: () => ({ class_name: NOTE, where: { status: 'open' } }),
      rows: false,
    },
    { tool: 'distinct', args: () => ({ class_name: NOTE, field: 'status' }), rows: false },
    { tool: 'query_class', args: () => ({ class_name: NOTE, order: 'rank' }), rows: true },
    {
      tool: 'semantic_search',
      args: () => ({ class_name: NOTE, query: 'first second third', k: 3 }),
      rows: true,
    },
    {
      tool: 'query_class',
      label: 'keys, projected',
      args: () => ({ class_name: NOTE, order: 'rank', keys: ['title'] }),
      rows: true,
    },
    {
      tool: 'query_class',
      label: 'csv',
      args: () => ({ class_name: NOTE, order: 'rank', format: 'csv' }),
      rows: true,
      text: true,
    },
    { tool: 'get_object', args: () => ({ class_name: NOTE, object_id: ids[0] }), rows: true },
    { tool: 'get_objects', args: () => ({ class_name: NOTE, ids }), rows: true },
    { tool: 'get_sample_objects', args: () => ({ class_name: NOTE, limit: 3 }), rows: true },
    { tool: 'aggregate', args: () => ({ class_name: NOTE, pipeline }), rows: true },
    {
      tool: 'aggregate',
      label: 'grouped: no objectId',
      args: () => ({
        class_name: NOTE,
        pipeline: [{ $group: { _id: '$status', n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
      }),
      rows: true,
    },
    { tool: 'group_by', args: () => ({ class_name: NOTE, field: 'status' }), rows: true },
    {
      tool: 'group_by_date',
      args: () => ({ class_name: NOTE, field: 'due', interval: 'month' }),
      rows: true,
    },
    {
      tool: 'export_data',
      args: () => ({ class_name: NOTE, order: 'rank', format: 'csv' }),
      rows: true,
      text: true,
    },
    {
      tool: 'atlas_text_search',
      args: () => ({ class_name: NOTE, query: 'first', fields: ['title'] }),
      rows: true,
    },
    {
      tool: 'atlas_autocomplete',
      args: () => ({ class_name: NOTE, query: 'sec', field: 'title' }),
      rows: true,
    },
    {
      tool: 'atlas_faceted_search',
      args: () => ({ class_name: NOTE, query: 'i', fields: ['title'], facets: ['status'] }),
      rows: true,
    },
  ];

  it('the cases cover every built-in read tool', () => {
    const readTools = BUILTIN_TOOLS.filter((tool) => isReadTool(tool)).map((tool) => tool.name);
    expect(readTools.length).toBeGreaterThan(10);
    expect(readTools.filter((name) => !CASES.some((c) => c.tool === name))).toEqual([]);
  });

  async function call(client: Client, tool: string, args: Record<string, unknown>) {
    const result = await client.callTool({ name: tool, arguments: args });
    const text = (result.content as Array<{ text: string }>)[0].text;
    expect({ tool, isError: result.isError, text: result.isError ? text : '' }).toEqual({
      tool,
      isError: false,
      text: '',
    });
    expect(result.structuredContent).toEqual(JSON.parse(unwrapUntrusted(text)));
    return result.structuredContent as Json;
  }

  it.each(CASES.map((c) => [c.label ? `${c.tool} (${c.label})` : c.tool, c] as const))(
    '%s: rows carry _source, and nothing else changes',
    async (_label, { tool, args, rows, text }) => {
      const off = await call(plain, tool, args());
      const on = await call(cited, tool, args());
      // Provenance off: no stamp anywhere.
      expect(stamped(off)).toEqual([]);
      if (text) {
        // A text table shows the stamp as a column naming the tool and the class on each row.
        const body = JSON.stringify(on);
        expect(body).toContain('_source');
        expect(body).toContain(tool);
        expect(body).toContain(NOTE);
        return;
      }
      // Only `_source` was added (after projection and redaction: the rows are otherwise equal).
      expect(unstamped(on)).toEqual(off);
      const stamps = stamped(on);
      if (!rows) {
        expect(stamps).toEqual([]);
        return;
      }
      expect(stamps.length).toBeGreaterThan(0);
      for (const { row, source } of stamps) {
        const objectId = typeof row.objectId === 'string' ? row.objectId : null;
        expect(source).toEqual({ class: NOTE, tool, objectId });
        if (objectId !== null) expect(ids).toContain(objectId);
      }
    },
  );

  it('a grouped aggregate row cites the class without claiming an objectId', async () => {
    const on = await call(cited, 'aggregate', {
      class_name: NOTE,
      pipeline: [{ $project: { objectId: '$title', rank: 1 } }],
    });
    // The output column `objectId` here holds titles, not ids: the stamp does not repeat it.
    const stamps = stamped(on);
    expect(stamps.map((s) => s.row.objectId).sort()).toEqual(['first', 'second', 'third']);
    for (const { source } of stamps)
      expect(source).toEqual({ class: NOTE, tool: 'aggregate', objectId: null });
  });

  it('describe() reports it; a value other than true or false is an error naming the option', () => {
    const factory = app.get(ParseAgentFactory);
    expect(factory.create({ sourceProvenance: true }).describe()).toMatchObject({
      source_provenance: true,
    });
    expect(factory.create().describe()).toMatchObject({ source_provenance: false });
    expect(() => factory.create({ sourceProvenance: 'yes' as unknown as boolean })).toThrow(
      /sourceProvenance must be true or false/,
    );
  });
});
