import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { SearchIndexer } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { ENV_GATES } from 'nestjs-parse-agent/ops';
import { AppModule } from '../../src/example/app.module';
import { demoTestSettings, seedDemo } from '../harness/demo-data';
import { createUser } from '../harness/fixtures';
import { findRows, parseRest, testParseConfig, type RestAuth } from '../harness/parse-rest';

const API_KEY = 'tenant-binding-operator-key';
const TENANT_CLASSES = ['Customer', 'Order', 'Product', 'SupportTicket', 'ApiCredential'];
/** What a globex row looks like from outside: its slug, SKUs, order numbers and e-mail domain. */
const GLOBEX = /globex/i;
/** A change to a field each class has (a field it lacks would be refused for that reason alone). */
const CHANGES: Record<string, Record<string, unknown>> = {
  Customer: { name: 'hijacked' },
  Order: { status: 'refunded' },
  Product: { price: 0 },
  SupportTicket: { status: 'closed' },
  ApiCredential: { service: 'hijacked' },
};

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
}

/**
 * Issue 20, items 1 and 2, tried the way an attacker would: a stranger signs up claiming
 * `tenantId: 'globex'`, alice rewrites her own `_User.tenantId` to 'globex', and both try every
 * tool the demo's MCP endpoint offers and Parse REST directly. Nothing of globex may come back
 * and no globex row may change.
 */
describe('demo tenant binding: a field the user can write decides nothing', () => {
  let app: INestApplication;
  let url: string;
  let tokens: { alice: string; bob: string; carol: string };
  let stranger: string;
  /** objectIds of globex rows, per class (read with the master key) */
  const globexIds: Record<string, string[]> = {};
  /** acme rows per class: an upper bound for anything alice may count */
  const acmeTotals: Record<string, number> = {};
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // carol (a demo writer) gets the write tier, so her probes below exercise call_method too.
    for (const gate of [ENV_GATES.writeTools]) {
      saved[gate] = process.env[gate];
      process.env[gate] = 'true';
    }
    tokens = await seedDemo();
    const master: RestAuth = { masterKey: true };
    for (const className of TENANT_CLASSES) {
      const rows = await findRows(className, { tenantId: 'globex' }, master, {
        limit: '5000',
        keys: 'objectId',
      });
      globexIds[className] = rows.map((r) => String(r.objectId));
      expect(globexIds[className].length).toBeGreaterThan(0);
      acmeTotals[className] = (
        await parseRest<{ count: number }>(
          'GET',
          `/classes/${className}?${new URLSearchParams({ where: JSON.stringify({ tenantId: 'acme' }), count: '1', limit: '0' }).toString()}`,
          undefined,
          master,
        )
      ).count;
    }

    // A stranger signs up, claiming globex in the sign-up body.
    stranger = (await createUser('mallory', 'mallory-password', { tenantId: 'globex' }))
      .sessionToken;
    // alice rewrites her own tenant field: Parse lets every user edit their own _User row.
    const me = await parseRest<{ objectId: string }>('GET', '/users/me', undefined, {
      sessionToken: tokens.alice,
    });
    await parseRest(
      'PUT',
      `/users/${me.objectId}`,
      { tenantId: 'globex' },
      { sessionToken: tokens.alice },
    );
    const after = await parseRest<{ tenantId: string }>('GET', '/users/me', undefined, {
      sessionToken: tokens.alice,
    });
    expect(after.tenantId).toBe('globex');

    const cfg = testParseConfig();
    const module = await Test.createTestingModule({
      imports: [
        AppModule.forRoot({
          // Every tool against every class is more calls than the default 60 a minute.
          settings: { ...demoTestSettings(), rateLimitPerMinute: 100_000 },
          parseServerURL: cfg.serverURL,
          mcpApiKey: API_KEY,
          // As main.ts does for the embedded database: analytics run on the direct path.
          postgresURI: cfg.databaseURI,
        }),
      ],
    }).compile();
    // semantic_search answers only over stored vectors: embed every row of the searchable
    // classes, both tenants', as the embedded demo does after seeding.
    const indexer = module.get(SearchIndexer);
    for (const className of ['SupportTicket', 'Product']) {
      const rows = await findRows(className, {}, master, { limit: '5000' });
      await indexer.indexRows(className, rows as Array<{ objectId: string }>);
    }
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/mcp`.replace('[::1]', '127.0.0.1');
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    for (const [gate, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[gate];
      else process.env[gate] = value;
    }
  });

  async function connect(token: string) {
    const client = new Client({ name: 'tenant-binding', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  }

  // A plain tools/call: callTool would also check results against the tool's output schema, and
  // what this suite checks is what comes back, not its shape.
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.request(
      { method: 'tools/call', params: { name, arguments: args } },
      CallToolResultSchema,
    )) as unknown as ToolResult;
  const dataOf = (result: ToolResult) => {
    expect(result.isError ? result.content[0].text : 'ok').toBe('ok');
    return JSON.parse(unwrapUntrusted(result.content[0].text)) as Record<string, unknown>;
  };

  /** Arguments for each read tool: plain, and aimed at globex where the tool takes a filter. */
  const PROBES: Record<string, (cls: string) => Array<Record<string, unknown>>> = {
    query_class: (c) => [
      { class_name: c, limit: 1000 },
      { class_name: c, where: { tenantId: 'globex' } },
    ],
    count_objects: (c) => [{ class_name: c }, { class_name: c, where: { tenantId: 'globex' } }],
    get_object: (c) => [{ class_name: c, object_id: globexIds[c][0] }],
    get_objects: (c) => [{ class_name: c, ids: globexIds[c].slice(0, 10) }],
    get_sample_objects: (c) => [{ class_name: c }],
    distinct: (c) => [{ class_name: c, field: 'tenantId' }],
    group_by: (c) => [{ class_name: c, field: 'tenantId' }],
    group_by_date: (c) => [{ class_name: c, field: 'createdAt', interval: 'year' }],
    aggregate: (c) => [
      { class_name: c, pipeline: [{ $group: { _id: '$tenantId', n: { $sum: 1 } } }] },
      { class_name: c, pipeline: [{ $match: { tenantId: 'globex' } }, { $limit: 5 }] },
    ],
    explain_query: (c) => [{ class_name: c }],
    // Answers on the searchable classes (SupportTicket, Product), refuses the others; words that
    // globex rows hold, so a leak of theirs would rank first.
    semantic_search: (c) => [
      { class_name: c, query: 'globex order refund late delivery', k: 50 },
      { class_name: c, query: 'globex', k: 50, where: { tenantId: 'globex' } },
    ],
    export_data: (c) => [{ class_name: c, row_cap: 5000 }],
    get_schema: (c) => [{ class_name: c }],
    get_all_schemas: () => [{}],
    list_tools: () => [{}],
    // The example app's own @AgentTool: a globex customer's orders.
    order_summary: (c) => (c === 'Customer' ? [{ customer_id: globexIds.Customer[0] }] : []),
    // Listed while the operator allows write tools; each model's method, aimed at a globex row.
    call_method: (c) => [
      {
        class_name: c,
        object_id: globexIds[c][0],
        method_name: { Customer: 'anonymize', SupportTicket: 'close' }[c] ?? 'refund',
        arguments: c === 'Order' ? { reason: 'cross-tenant probe' } : {},
      },
    ],
  };

  /** Every globex row of the tenant classes, as the master key sees it. */
  async function globexSnapshot() {
    const rows: Record<string, unknown> = {};
    for (const className of TENANT_CLASSES) {
      rows[className] = await findRows(
        className,
        { tenantId: 'globex' },
        { masterKey: true },
        { limit: '5000', order: 'objectId' },
      );
    }
    return rows;
  }

  /** Every string in a value, at any depth. */
  const stringsIn = (value: unknown): string[] =>
    typeof value === 'string'
      ? [value]
      : value && typeof value === 'object'
        ? Object.values(value).flatMap(stringsIn)
        : [];

  /**
   * Asserts an answer names no globex row: no slug, SKU, order number, e-mail or objectId. The
   * caller's own arguments may be echoed (get_objects lists the ids it did not find), so they are
   * taken out first: what remains is what the server chose to say.
   */
  function expectNoGlobex(
    result: ToolResult,
    className: string,
    label: string,
    args: Record<string, unknown>,
  ) {
    let text = result.content.map((c) => c.text).join('\n');
    for (const echoed of stringsIn(args)) text = text.split(echoed).join('<arg>');
    const leaked = GLOBEX.test(text) || globexIds[className].some((id) => text.includes(id));
    if (leaked) throw new Error(`${label} leaked globex: ${text.slice(0, 4000)}`);
    // Counts never exceed what the caller's own tenant holds.
    if (!result.isError && /^(count_objects|group_by|group_by_date)$/.test(label.split(' ')[0])) {
      const data = JSON.parse(unwrapUntrusted(result.content[0].text)) as {
        count?: number;
        groups?: Array<{ value: number }>;
      };
      const total = data.count ?? (data.groups ?? []).reduce((sum, g) => sum + g.value, 0);
      expect(total).toBeLessThanOrEqual(acmeTotals[className]);
    }
  }

  it('binds alice to acme, her tenant role, although her own tenant field says globex', async () => {
    // A fresh MCP session: initialize always re-checks the user with Parse.
    const alice = await connect(tokens.alice);
    try {
      expect(dataOf(await call(alice, 'count_objects', { class_name: 'Order' })).count).toBe(1470);
      expect(
        dataOf(await call(alice, 'group_by', { class_name: 'Order', field: 'tenantId' })).groups,
      ).toEqual([{ key: 'acme', value: 1470 }]);

      const tools = (await alice.listTools()).tools.map((t) => t.name);
      // Every tool offered has a probe here: a new tool must be added to this test.
      expect(tools.filter((t) => !PROBES[t])).toEqual([]);
      const before = await globexSnapshot();
      const answered = new Set<string>();
      for (const tool of tools) {
        for (const className of TENANT_CLASSES) {
          for (const args of PROBES[tool](className)) {
            const result = await call(alice, tool, args);
            expectNoGlobex(result, className, `${tool} ${className} ${JSON.stringify(args)}`, args);
            if (!result.isError) answered.add(tool);
          }
        }
      }
      expect(await globexSnapshot()).toEqual(before);
      // Not vacuous: the other tools did answer alice (with her own tenant's rows); these two were
      // only ever aimed at a globex row, and must have been refused.
      const globexOnly = ['call_method', 'get_object'];
      expect([...answered].sort()).toEqual(tools.filter((t) => !globexOnly.includes(t)).sort());
      expect([...answered].filter((t) => globexOnly.includes(t))).toEqual([]);
    } finally {
      await alice.close();
    }
  });

  it('gives a signed-up stranger claiming globex no agent at all: every MCP call is 401', async () => {
    const auth = {
      Authorization: `Bearer ${stranger}`,
      Accept: 'application/json, text/event-stream',
    };
    await expect(connect(stranger)).rejects.toThrow(/401|Unauthorized/);
    for (const tool of Object.keys(PROBES)) {
      for (const className of TENANT_CLASSES) {
        for (const args of PROBES[tool](className)) {
          const res = await request(app.getHttpServer())
            .post('/mcp')
            .set(auth)
            .send({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: tool, arguments: args },
            });
          expect({ tool, className, status: res.status }).toEqual({
            tool,
            className,
            status: 401,
          });
          expect(res.text).not.toMatch(GLOBEX);
        }
      }
    }
  });

  it('keeps carol (admin, writes on) bound to her acme membership: a globex refund is refused', async () => {
    const carol = await connect(tokens.carol);
    try {
      expect(dataOf(await call(carol, 'count_objects', { class_name: 'Order' })).count).toBe(1470);
      const [target] = await findRows(
        'Order',
        { tenantId: 'globex', status: 'paid' },
        { masterKey: true },
      );
      const refund = await call(carol, 'call_method', {
        class_name: 'Order',
        object_id: target.objectId,
        method_name: 'refund',
        arguments: { reason: 'cross-tenant attempt' },
      });
      expect(refund.isError).toBe(true);
      const [now] = await findRows('Order', { objectId: target.objectId }, { masterKey: true });
      expect(now.status).toBe('paid');
    } finally {
      await carol.close();
    }
  });

  describe('Parse REST on the same server, with the users own tokens', () => {
    const callers = () =>
      [
        ['alice', tokens.alice],
        ['stranger', stranger],
      ] as const;

    /** The rows of a class a session can find, or none when Parse refuses the find outright. */
    async function visible(className: string, where: Record<string, unknown>, token: string) {
      return findRows(className, where, { sessionToken: token }, { limit: '5000' }).catch(
        () => [] as Array<Record<string, unknown>>,
      );
    }

    it('finds, counts and gets no globex row of any tenant class', async () => {
      for (const [who, token] of callers()) {
        for (const className of TENANT_CLASSES) {
          const label = `${who} ${className}`;
          for (const where of [{}, { tenantId: 'globex' }]) {
            const rows = await visible(className, where, token);
            expect({ label, globex: rows.filter((r) => r.tenantId !== 'acme').length }).toEqual({
              label,
              globex: 0,
            });
          }
          const count = await parseRest<{ count: number }>(
            'GET',
            `/classes/${className}?${new URLSearchParams({ where: JSON.stringify({ tenantId: 'globex' }), count: '1', limit: '0' }).toString()}`,
            undefined,
            { sessionToken: token },
          ).then(
            (r) => r.count,
            () => 0,
          );
          expect({ label, count }).toEqual({ label, count: 0 });
          for (const id of globexIds[className].slice(0, 3)) {
            await expect(
              parseRest('GET', `/classes/${className}/${id}`, undefined, { sessionToken: token }),
            ).rejects.toThrow();
          }
        }
      }
    });

    it('sees nothing of any tenant as a stranger, whatever the sign-up body said', async () => {
      for (const className of TENANT_CLASSES) {
        expect({ className, rows: (await visible(className, {}, stranger)).length }).toEqual({
          className,
          rows: 0,
        });
      }
    });

    it('changes no globex row (the order alice refunded straight through /parse before)', async () => {
      for (const [, token] of callers()) {
        for (const className of TENANT_CLASSES) {
          const id = globexIds[className][0];
          const [before] = await findRows(className, { objectId: id }, { masterKey: true });
          await expect(
            parseRest('PUT', `/classes/${className}/${id}`, CHANGES[className], {
              sessionToken: token,
            }),
          ).rejects.toThrow();
          await expect(
            parseRest('DELETE', `/classes/${className}/${id}`, undefined, { sessionToken: token }),
          ).rejects.toThrow();
          const [after] = await findRows(className, { objectId: id }, { masterKey: true });
          expect(after).toEqual(before);
        }
      }
    });

    it('cannot hand one of her own tenant’s rows to globex, or widen who reads it', async () => {
      const [order] = await findRows(
        'Order',
        { tenantId: 'acme', isDeleted: false },
        { masterKey: true },
      );
      const id = String(order.objectId);
      const attempts: Array<Record<string, unknown>> = [
        { tenantId: 'globex' },
        { ACL: { 'role:globex-staff': { read: true, write: true } } },
        { ACL: { '*': { read: true } } },
        { status: 'refunded', tenantId: 'globex' },
      ];
      for (const body of attempts) {
        await expect(
          parseRest('PUT', `/classes/Order/${id}`, body, { sessionToken: tokens.alice }),
        ).rejects.toThrow(/cannot be changed/);
      }
      const [after] = await findRows('Order', { objectId: id }, { masterKey: true });
      expect(after).toEqual(order);
      // A change within her tenant still goes through (the demo's write methods rely on it).
      await parseRest(
        'PUT',
        `/classes/Order/${id}`,
        { channel: 'store' },
        {
          sessionToken: tokens.alice,
        },
      );
      const [changed] = await findRows('Order', { objectId: id }, { masterKey: true });
      expect(changed).toMatchObject({ channel: 'store', tenantId: 'acme', ACL: order.ACL });
    });

    it('opens tickets only in her own tenant, with that tenant’s ACL whatever she sends', async () => {
      const ticket = { subject: 'planted', body: 'x', priority: 'low', status: 'open' };
      await expect(
        parseRest(
          'POST',
          '/classes/SupportTicket',
          { ...ticket, tenantId: 'globex', ACL: { 'role:globex-staff': { read: true } } },
          { sessionToken: tokens.alice },
        ),
      ).rejects.toThrow(/not staff of tenant 'globex'/);
      await expect(
        parseRest('POST', '/classes/SupportTicket', ticket, { sessionToken: tokens.alice }),
      ).rejects.toThrow(/needs the tenantId/);
      const created = await parseRest<{ objectId: string }>(
        'POST',
        '/classes/SupportTicket',
        { ...ticket, tenantId: 'acme', ACL: { '*': { read: true, write: true } } },
        { sessionToken: tokens.alice },
      );
      const [row] = await findRows(
        'SupportTicket',
        { objectId: created.objectId },
        { masterKey: true },
      );
      expect(row.ACL).toEqual({
        'role:acme-staff': { read: true, write: true },
        'role:admin': { read: true, write: true },
      });
      expect(await visible('SupportTicket', { objectId: created.objectId }, tokens.bob)).toEqual(
        [],
      );
      expect(await visible('SupportTicket', { subject: 'planted' }, tokens.bob)).toEqual([]);
      await parseRest('DELETE', `/classes/SupportTicket/${created.objectId}`, undefined, {
        masterKey: true,
      });
    });

    it('cannot make anyone a tenant member: roles are the operator’s alone', async () => {
      const [globexStaff] = await findRows('_Role', { name: 'globex-staff' }, { masterKey: true });
      for (const [, token] of callers()) {
        const me = await parseRest<{ objectId: string }>('GET', '/users/me', undefined, {
          sessionToken: token,
        });
        const self = { __type: 'Pointer', className: '_User', objectId: me.objectId };
        await expect(
          parseRest(
            'PUT',
            `/roles/${String(globexStaff.objectId)}`,
            { users: { __op: 'AddRelation', objects: [self] } },
            { sessionToken: token },
          ),
        ).rejects.toThrow();
        // A new "<slug>-staff" role of one's own would be a tenant binding: creating roles is closed.
        await expect(
          parseRest(
            'POST',
            '/roles',
            {
              name: `initech${me.objectId}-staff`,
              ACL: { '*': { read: true } },
              users: { __op: 'AddRelation', objects: [self] },
            },
            { sessionToken: token },
          ),
        ).rejects.toThrow();
      }
      const members = await findRows(
        '_User',
        {
          $relatedTo: {
            object: { __type: 'Pointer', className: '_Role', objectId: globexStaff.objectId },
            key: 'users',
          },
        },
        { masterKey: true },
      );
      expect(members.map((u) => u.username)).toEqual(['bob']);
    });
  });
});
