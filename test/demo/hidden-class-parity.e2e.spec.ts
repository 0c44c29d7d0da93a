import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ParseAgentModule } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { ENV_GATES } from 'nestjs-parse-agent/ops';
import { CORE_MODELS } from '../../src/example/models';
import { seedDemo } from '../harness/demo-data';
import { createObject } from '../harness/fixtures';
import { parseRest, testParseConfig, testParseConnection } from '../harness/parse-rest';

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

const OBJECT_ID = 'aaaaaaaaaa';

/**
 * Every tool, resource and prompt that takes a class name, asked about a hidden class that exists
 * and about a class that does not: the answers must be the same (code, details and message, with
 * only the name differing), so no surface confirms that a hidden class exists. Driven through the
 * MCP endpoint with a real session token, by an admin agent with every write switch on, so the
 * class gate (not a tier or env gate) is what answers.
 */
describe('hidden classes answer exactly like missing ones, on every surface', () => {
  let app: INestApplication;
  /** carol's session token (admin tier, writes allowed) */
  let client: Client;
  /** a master-key agent */
  let operator: Client;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const gate of Object.values(ENV_GATES)) {
      saved[gate] = process.env[gate];
      process.env[gate] = 'true';
    }
    const { carol } = await seedDemo();
    await createObject('UnmodelledSecret', { name: 'sk_live_parity_secret' });
    const me = await parseRest<{ tenantId?: string }>('GET', '/users/me', undefined, {
      sessionToken: carol,
    });
    const module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: CORE_MODELS,
          unregisteredClasses: 'hidden',
          suppressSecurityBanners: true,
          rateLimiter: { check: () => undefined },
          // Analytics for session-token agents run on the direct PostgreSQL path.
          postgres: { uri: testParseConfig().databaseURI },
          agentFactory: (req) => {
            const token = /^Bearer (\S+)$/.exec(String(req.headers.authorization))?.[1];
            // No token: the operator, a master-key agent (the schema tools need one).
            return token
              ? {
                  sessionToken: token,
                  tenantId: me.tenantId,
                  permissions: 'admin',
                  allowMutations: true,
                }
              : { permissions: 'admin', allowMutations: true };
          },
          mcp: { maxConcurrentStreams: 20 },
        }),
      ],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    const url = `${await app.getUrl()}/mcp`.replace('[::1]', '127.0.0.1');
    const connect = async (headers: Record<string, string>) => {
      const connected = new Client({ name: 'parity', version: '1.0.0' });
      await connected.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
      );
      return connected;
    };
    client = await connect({ Authorization: `Bearer ${carol}` });
    operator = await connect({});
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await operator?.close();
    await app?.close();
    for (const [gate, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[gate];
      else process.env[gate] = value;
    }
  });

  /** Hidden classes that exist on the server, each with a missing name of the same form. */
  const PAIRS: Array<[hidden: string, missing: string]> = [
    ['ApiCredential', 'Zqxwvbn'], // @AgentHidden model
    ['UnmodelledSecret', 'Zqxwvbn'], // no model (unregisteredClasses: 'hidden')
    ['_Session', '_Zqxwvbn'], // Parse internal table
    ['_GlobalConfig', '_Zqxwvbn'],
  ];

  /** Each tool with arguments naming the class, top-level or nested. */
  const TOOLS: Array<
    [label: string, tool: string, args: (cls: string) => Record<string, unknown>]
  > = [
    ['query_class', 'query_class', (c) => ({ class_name: c })],
    ['count_objects', 'count_objects', (c) => ({ class_name: c })],
    ['get_schema', 'get_schema', (c) => ({ class_name: c })],
    ['get_object', 'get_object', (c) => ({ class_name: c, object_id: OBJECT_ID })],
    ['get_objects', 'get_objects', (c) => ({ class_name: c, ids: [OBJECT_ID] })],
    ['get_sample_objects', 'get_sample_objects', (c) => ({ class_name: c })],
    ['distinct', 'distinct', (c) => ({ class_name: c, field: 'name' })],
    ['group_by', 'group_by', (c) => ({ class_name: c, field: 'name' })],
    [
      'group_by_date',
      'group_by_date',
      (c) => ({ class_name: c, field: 'createdAt', interval: 'month' }),
    ],
    ['aggregate', 'aggregate', (c) => ({ class_name: c, pipeline: [{ $limit: 1 }] })],
    ['explain_query', 'explain_query', (c) => ({ class_name: c })],
    ['semantic_search', 'semantic_search', (c) => ({ class_name: c, query: 'refund' })],
    ['export_data', 'export_data', (c) => ({ class_name: c })],
    [
      'call_method',
      'call_method',
      (c) => ({ class_name: c, method_name: 'refund', object_id: OBJECT_ID }),
    ],
    ['create_object', 'create_object', (c) => ({ class_name: c, values: { name: 'x' } })],
    [
      'update_object',
      'update_object',
      (c) => ({ class_name: c, object_id: OBJECT_ID, values: { name: 'x' } }),
    ],
    ['delete_object', 'delete_object', (c) => ({ class_name: c, object_id: OBJECT_ID })],
    [
      'create_class',
      'create_class',
      (c) => ({ class_name: c, fields: { name: { type: 'String' } } }),
    ],
    [
      'create_class (pointer target)',
      'create_class',
      (c) => ({ class_name: 'ParityScratch', fields: { p: { type: 'Pointer', target_class: c } } }),
    ],
    ['delete_class', 'delete_class', (c) => ({ class_name: c })],
    [
      'query_class ($inQuery)',
      'query_class',
      (c) => ({
        class_name: 'Order',
        where: { customer: { $inQuery: { className: c, where: {} } } },
      }),
    ],
    [
      'group_by ($select)',
      'group_by',
      (c) => ({
        class_name: 'Order',
        field: 'status',
        where: { status: { $select: { query: { className: c, where: {} }, key: 'name' } } },
      }),
    ],
    [
      'export_data ($notInQuery)',
      'export_data',
      (c) => ({
        class_name: 'Order',
        where: { customer: { $notInQuery: { className: c, where: {} } } },
      }),
    ],
    [
      'aggregate ($lookup)',
      'aggregate',
      (c) => ({
        class_name: 'Order',
        pipeline: [{ $lookup: { from: c, localField: 'customer', foreignField: '_id', as: 'x' } }],
      }),
    ],
    [
      'export_data (pipeline $lookup)',
      'export_data',
      (c) => ({
        class_name: 'Order',
        pipeline: [{ $lookup: { from: c, localField: 'customer', foreignField: '_id', as: 'x' } }],
      }),
    ],
  ];

  /** What a caller can observe of a tool answer, with the class name blanked. */
  const observed = (res: ToolResult, name: string) => {
    const blank = (value: unknown) =>
      JSON.stringify(value ?? null)
        .split(name)
        .join('<name>');
    return {
      isError: res.isError ?? false,
      text: blank(res.content.map((c) => unwrapUntrusted(c.text))),
      structured: blank(res.structuredContent),
      meta: blank(res._meta),
    };
  };

  const callTool = async (
    tool: string,
    args: Record<string, unknown>,
    as: Client = client,
  ): Promise<ToolResult> =>
    (await as.callTool({ name: tool, arguments: args })) as unknown as ToolResult;

  it.each(TOOLS)('%s', async (_label, tool, args) => {
    let gated = 0;
    for (const as of [client, operator]) {
      for (const [hidden, missing] of PAIRS) {
        const forHidden = observed(await callTool(tool, args(hidden), as), hidden);
        const forMissing = observed(await callTool(tool, args(missing), as), missing);
        expect(forHidden).toEqual(forMissing);
        // A refusal, never a result, and nothing of the hidden rows.
        expect(forHidden.isError).toBe(true);
        expect(forHidden.text).not.toMatch(/sk_live|whsec|sessionToken/);
        if (/class_not_found|hidden_class/.test(forHidden.structured + forHidden.meta)) gated++;
      }
    }
    // The class gate answered (not only a tier, name-syntax or routing refusal that ignores the
    // class), at least for the names without an underscore.
    expect(gated).toBeGreaterThanOrEqual(2);
  });

  it('every tool taking a class name is in the table', async () => {
    // The operator (master key) lists the schema tools too.
    const { tools } = await operator.listTools();
    const withClass = tools
      .filter((t) => 'class_name' in ((t.inputSchema.properties ?? {}) as object))
      .map((t) => t.name)
      .sort();
    const covered = [...new Set(TOOLS.map(([, tool]) => tool))].sort();
    expect(covered).toEqual(withClass);
  });

  it('parse:// resources', async () => {
    const read = (uri: string) =>
      client.readResource({ uri }).then(
        (r) => ({ ok: JSON.stringify(r) }),
        (e: Error) => ({ error: e.message }),
      );
    for (const kind of ['schema', 'count', 'samples']) {
      for (const [hidden, missing] of PAIRS) {
        const forHidden = await read(`parse://${hidden}/${kind}`);
        const forMissing = await read(`parse://${missing}/${kind}`);
        expect(JSON.stringify(forHidden).split(hidden).join('<name>')).toBe(
          JSON.stringify(forMissing).split(missing).join('<name>'),
        );
        expect(forHidden).toHaveProperty('error');
      }
    }
    const { resources } = await client.listResources();
    expect(JSON.stringify(resources)).not.toMatch(/ApiCredential|UnmodelledSecret|_Session/);
  });

  it('prompts with a class argument', async () => {
    const prompts: Array<[string, (cls: string) => Record<string, string>]> = [
      ['class_overview', (c) => ({ class_name: c })],
      ['count_by', (c) => ({ class_name: c, group_by: 'name' })],
      ['recent_activity', (c) => ({ class_name: c })],
      ['created_in_range', (c) => ({ class_name: c, since: '2024-01-01T00:00:00Z' })],
      [
        'find_relationship',
        (c) => ({
          parent_class: c,
          parent_id: OBJECT_ID,
          child_class: 'Order',
          pointer_field: 'customer',
        }),
      ],
      ['parse_relations', (c) => ({ classes: `${c},Order` })],
    ];
    const get = (name: string, args: Record<string, string>) =>
      client.getPrompt({ name, arguments: args }).then(
        (r) => ({ ok: r.messages }),
        (e: Error) => ({ error: e.message }),
      );
    for (const [name, args] of prompts) {
      for (const [hidden, missing] of PAIRS) {
        const forHidden = JSON.stringify(await get(name, args(hidden)));
        const forMissing = JSON.stringify(await get(name, args(missing)));
        expect(forHidden.split(hidden).join('<name>')).toBe(
          forMissing.split(missing).join('<name>'),
        );
      }
    }
  });

  describe('cost caps hold in the analytics and export tools', () => {
    const clauses = Array.from({ length: 60 }, (_, i) => ({
      customer: {
        $select: { query: { className: 'Customer', where: { city: `City${i}` } }, key: 'objectId' },
      },
    }));
    const costly = { $or: clauses };

    it.each([
      ['group_by', { class_name: 'Order', field: 'status', where: costly }],
      [
        'group_by_date',
        { class_name: 'Order', field: 'createdAt', interval: 'month', where: costly },
      ],
      ['distinct', { class_name: 'Order', field: 'status', where: costly }],
      ['export_data', { class_name: 'Order', where: costly }],
      ['explain_query', { class_name: 'Order', where: costly }],
    ])('%s refuses the 60-$select where fast, before Parse sees it', async (tool, args) => {
      const started = Date.now();
      const res = await callTool(tool, args);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(res.isError).toBe(true);
      expect(res.content[0].text).toMatch(/too costly.*more than 32/);
      expect(JSON.stringify(res.structuredContent ?? res._meta)).toContain('invalid_query');
    });

    it('aggregate and export_data refuse a 60-clause $match fast', async () => {
      const deepMatch = { $or: Array.from({ length: 60 }, (_, i) => ({ status: `s${i}` })) };
      for (const tool of ['aggregate', 'export_data']) {
        const started = Date.now();
        const res = await callTool(tool, {
          class_name: 'Order',
          pipeline: [{ $match: deepMatch }],
        });
        expect(Date.now() - started).toBeLessThan(1000);
        expect(res.isError).toBe(true);
        expect(res.content[0].text).toMatch(/\$match is too costly to run: more than 32/);
      }
    });
  });
});
