import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Logger, type INestApplication } from '@nestjs/common';
import express from 'express';
import { requestContextMiddleware } from '../../src/example/audit/request-context';
import type { ToolCallAuditRecord } from '../../src/example/audit/tool-call-audit.service';
import { checkParse, ReadinessService } from '../../src/example/health/readiness.service';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from '../../src/example/app.module';
import { demoTestSettings, seedDemo } from '../harness/demo-data';
import { findRows, testParseConfig } from '../harness/parse-rest';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { closedLocalPort } from '../harness/closed-port';

const API_KEY = 'demo-test-operator-key';

/** The demo app's MCP endpoint, with its own guard and agent factory, on the real Parse Server. */
describe('demo app serves MCP (guard + agentFactory)', () => {
  let app: INestApplication;
  let url: string;
  let tokens: { alice: string; bob: string };

  beforeAll(async () => {
    tokens = await seedDemo();
    const cfg = testParseConfig();
    const settings = demoTestSettings();
    const module = await Test.createTestingModule({
      imports: [
        // As main.ts does for the embedded database: the direct PostgreSQL path is configured.
        AppModule.forRoot({
          settings,
          parseServerURL: cfg.serverURL,
          mcpApiKey: API_KEY,
          postgresURI: cfg.databaseURI,
        }),
      ],
    }).compile();
    // As main.ts does: the request-context middleware ahead of everything else.
    const server = express();
    server.use(requestContextMiddleware);
    app = module.createNestApplication(new ExpressAdapter(server), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/mcp`.replace('[::1]', '127.0.0.1');
  }, 60_000);
  afterAll(() => app.close());

  async function connect(headers: Record<string, string>) {
    const client = new Client({ name: 'demo-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
    );
    return client;
  }

  function countOf(result: unknown): number {
    const text = (result as { content: Array<{ text: string }> }).content[0].text;
    return JSON.parse(unwrapUntrusted(text)).count;
  }

  it('scopes a Bearer session token to that user and tenant', async () => {
    const client = await connect({ Authorization: `Bearer ${tokens.alice}` });
    const count = await client.callTool({
      name: 'count_objects',
      arguments: { class_name: 'Order' },
    });
    expect(countOf(count)).toBe(1470);
    const other = await client.callTool({
      name: 'query_class',
      arguments: { class_name: 'Order', where: { tenantId: 'globex' } },
    });
    expect(other.isError).toBe(true);
    const hidden = await client.callTool({
      name: 'query_class',
      arguments: { class_name: 'ApiCredential' },
    });
    expect(hidden.isError).toBe(true);
    expect(JSON.stringify(hidden)).not.toMatch(/sk_live|whsec/);
    await client.close();
  });

  it('answers "orders per status" for alice from SQL, summing to her tenant only', async () => {
    const dataOf = (result: unknown) =>
      JSON.parse(
        unwrapUntrusted((result as { content: Array<{ text: string }> }).content[0].text),
      ) as { groups: Array<{ key: unknown; value: number }> };
    const alice = await connect({ Authorization: `Bearer ${tokens.alice}` });
    const perStatus = await alice.callTool({
      name: 'group_by',
      arguments: { class_name: 'Order', field: 'status' },
    });
    expect(perStatus.isError ? perStatus.content : 'ok').toBe('ok');
    const groups = dataOf(perStatus).groups;
    expect(groups.length).toBeGreaterThan(1);
    expect(groups.reduce((sum, g) => sum + g.value, 0)).toBe(1470);
    // Grouping by the tenant field shows nothing but her own tenant.
    const perTenant = dataOf(
      await alice.callTool({
        name: 'group_by',
        arguments: { class_name: 'Order', field: 'tenantId' },
      }),
    ).groups;
    expect(perTenant).toEqual([{ key: 'acme', value: 1470 }]);
    await alice.close();

    const bob = await connect({ Authorization: `Bearer ${tokens.bob}` });
    const bobCount = countOf(
      await bob.callTool({ name: 'count_objects', arguments: { class_name: 'Order' } }),
    );
    const bobGroups = dataOf(
      await bob.callTool({
        name: 'group_by',
        arguments: { class_name: 'Order', field: 'tenantId' },
      }),
    ).groups;
    expect(bobGroups.map((g) => g.key)).not.toContain('acme');
    expect(bobGroups.reduce((sum, g) => sum + g.value, 0)).toBe(bobCount);
    await bob.close();
  });

  it('gives the operator key a master-key readonly agent across tenants', async () => {
    const client = await connect({ 'X-MCP-API-Key': API_KEY });
    expect(
      countOf(await client.callTool({ name: 'count_objects', arguments: { class_name: 'Order' } })),
    ).toBe(2940);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('query_class');
    expect(tools.tools.map((t) => t.name)).not.toContain('create_object');
    await client.close();
  });

  it("serves the example's own tool: a customer's orders as the caller may read them", async () => {
    const master = { masterKey: true };
    // A customer of each tenant, with their orders as Parse REST lists them (soft-deleted left out,
    // as the Order model's canonical filter does), newest first.
    const customerOf = async (tenant: string) => {
      const [order] = await findRows('Order', { tenantId: tenant }, master, {
        limit: '1',
        keys: 'customer',
      });
      const customerId = (order.customer as { objectId: string }).objectId;
      const pointer = { __type: 'Pointer', className: 'Customer', objectId: customerId };
      const rows = await findRows(
        'Order',
        { customer: pointer, isDeleted: { $ne: true } },
        master,
        {
          limit: '1000',
          order: '-placedAt',
          keys: 'orderNumber',
        },
      );
      return { customerId, orderNumbers: rows.map((r) => r.orderNumber) };
    };
    const acme = await customerOf('acme');
    const globex = await customerOf('globex');
    expect(acme.orderNumbers.length).toBeGreaterThan(3);
    expect(globex.orderNumbers.length).toBeGreaterThan(0);

    const alice = await connect({ Authorization: `Bearer ${tokens.alice}` });
    const summary = async (args: Record<string, unknown>) => {
      const result = await alice.callTool({ name: 'order_summary', arguments: args });
      expect(result.isError ? result.content : 'ok').toBe('ok');
      const text = (result as { content: Array<{ text: string }> }).content[0].text;
      return JSON.parse(unwrapUntrusted(text)) as {
        customer_id: string;
        order_count: number;
        recent: Array<Record<string, unknown>>;
      };
    };
    const own = await summary({ customer_id: acme.customerId, recent: 3 });
    expect(own.order_count).toBe(acme.orderNumbers.length);
    expect(own.recent.map((r) => r.orderNumber)).toEqual(acme.orderNumbers.slice(0, 3));
    expect(typeof own.recent[0].placedAt).toBe('string');
    expect(own.recent[0]).not.toHaveProperty('ACL');
    // Another tenant's customer has no orders for her: the same answer as a customer that does
    // not exist, so the tool does not even confirm that it exists.
    expect(await summary({ customer_id: globex.customerId })).toEqual({
      customer_id: globex.customerId,
      order_count: 0,
      recent: [],
    });
    expect(await summary({ customer_id: 'noSuchCustomer' })).toEqual({
      customer_id: 'noSuchCustomer',
      order_count: 0,
      recent: [],
    });
    // Its schema refuses what it does not take, naming what it does.
    const bad = await alice.callTool({
      name: 'order_summary',
      arguments: { customer_id: acme.customerId, tenant: 'globex' },
    });
    expect(bad.isError).toBe(true);
    await alice.close();
  });

  it('answers 401 with the fixed body for a missing, wrong or expired credential', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'ping' };
    for (const headers of [
      {},
      { 'X-MCP-API-Key': 'wrong' },
      { Authorization: 'Bearer r:not-a-session' },
    ]) {
      const res = await request(app.getHttpServer())
        .post('/mcp')
        .set(headers)
        .send(body)
        .expect(401);
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Unauthorized' },
      });
    }
    await request(app.getHttpServer()).get('/health/live').expect(200, { status: 'ok' });
  });

  it('reports ready only after startup completed, naming what is not ready', async () => {
    const readiness = app.get(ReadinessService);
    const before = await request(app.getHttpServer()).get('/health/ready').expect(503);
    expect(before.body).toEqual({
      status: 'not_ready',
      notReady: ['startup: demo data not seeded and login not verified yet'],
    });
    readiness.markSeeded();
    await request(app.getHttpServer())
      .get('/health/ready')
      .expect(200, { status: 'ready', notReady: [] });
    await request(app.getHttpServer()).get('/health').expect(200);
  });

  it('names a wrong master key (without printing it) and an unreachable Parse Server', async () => {
    const closedPort = await closedLocalPort();
    const cfg = testParseConfig();
    const problems = await checkParse({ ...cfg, masterKey: 'not-the-master-key' });
    expect(problems).toEqual([
      `parse: Parse Server at ${cfg.serverURL} refused the master key (PARSE_MASTER_KEY)`,
    ]);
    expect(problems.join()).not.toContain('not-the-master-key');
    expect(await checkParse({ ...cfg, serverURL: `http://127.0.0.1:${closedPort}/parse` })).toEqual(
      [`parse: Parse Server at http://127.0.0.1:${closedPort}/parse is unreachable (ECONNREFUSED)`],
    );
  });

  it('writes one audit record per tool call with request id, session, principal and tool, never the token', async () => {
    const records: ToolCallAuditRecord[] = [];
    const spy = jest.spyOn(Logger.prototype, 'log').mockImplementation(function (
      this: Logger,
      message: unknown,
    ) {
      if ((message as ToolCallAuditRecord)?.msg === 'tool_call') {
        records.push(message as ToolCallAuditRecord);
      }
    });
    try {
      const res = await request(app.getHttpServer())
        .post('/mcp')
        .set('Content-Type', 'application/json')
        .set('Authorization', `Bearer ${tokens.alice}`)
        .set('X-Request-Id', 'audit-req-1')
        .set('X-MCP-Session-Id', 'audit-session-1')
        .send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'count_objects', arguments: { class_name: 'Order' } },
        })
        .expect(200);
      expect(res.headers['x-request-id']).toBe('audit-req-1');
    } finally {
      spy.mockRestore();
    }
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record).toMatchObject({
      msg: 'tool_call',
      tool: 'count_objects',
      outcome: 'ok',
      request_id: 'audit-req-1',
      session_id: 'audit-session-1',
      principal: { kind: 'user', tenant: 'acme' },
    });
    expect((record.principal as { user_id?: string }).user_id).toMatch(/^\w+$/);
    expect(JSON.stringify(record)).not.toContain(tokens.alice);
  });
});
