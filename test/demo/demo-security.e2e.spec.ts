import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { AppModule } from '../../src/example/app.module';
import { demoTestSettings, seedDemo } from '../harness/demo-data';
import { createObject, logIn } from '../harness/fixtures';
import { parseRest, testParseConfig } from '../harness/parse-rest';

const API_KEY = 'demo-security-operator-key';

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
}

/**
 * The leaks of issue 8, tried the way an attacker would: through the demo's MCP endpoint, with
 * real session tokens, against the real Parse Server. Each test asserts what must NOT come back.
 */
describe('demo MCP endpoint: subqueries, internal tables, hidden classes, costs', () => {
  let app: INestApplication;
  let url: string;
  let alice: Client;
  let operator: Client;
  let bootLog: jest.SpyInstance;

  beforeAll(async () => {
    // Boot lines of the library (Nest's Logger); the app itself logs nothing here.
    bootLog = jest.spyOn(Logger.prototype, 'log');
    const tokens = await seedDemo();
    // A class on the server that no demo model declares, holding a secret.
    await createObject('UnmodelledSecret', { apiKey: 'sk_live_unmodelled_123' });
    const cfg = testParseConfig();
    const settings = demoTestSettings();
    const module = await Test.createTestingModule({
      imports: [AppModule.forRoot({ settings, parseServerURL: cfg.serverURL, mcpApiKey: API_KEY })],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/mcp`.replace('[::1]', '127.0.0.1');
    alice = await connect({ Authorization: `Bearer ${tokens.alice}` });
    operator = await connect({ 'X-MCP-API-Key': API_KEY });
  }, 60_000);

  afterAll(async () => {
    bootLog?.mockRestore();
    await alice?.close();
    await operator?.close();
    await app?.close();
  });

  async function connect(headers: Record<string, string>) {
    const client = new Client({ name: 'demo-security', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
    );
    return client;
  }

  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as unknown as ToolResult;
  const data = (result: ToolResult) => {
    expect(result.isError).toBeFalsy();
    return JSON.parse(unwrapUntrusted(result.content[0].text)) as Record<string, unknown>;
  };
  const slugsOf = (result: ToolResult) =>
    (data(result).results as Array<{ slug: string }>).map((r) => r.slug);

  describe('subqueries go through the same policy as a top-level read', () => {
    const selectTenants = (where: Record<string, unknown>, className = 'Customer') => ({
      class_name: 'Tenant',
      where: { slug: { $select: { query: { className, where }, key: 'tenantId' } } },
    });

    it('refuses naming another tenant inside $select, and scopes an inner query to her tenant', async () => {
      const spoof = await call(
        alice,
        'query_class',
        selectTenants({ tenantId: 'globex', city: 'Osaka' }),
      );
      expect(spoof.isError).toBe(true);
      expect(spoof.structuredContent).toMatchObject({
        error_code: 'access_denied',
        details: { kind: 'tenant_scope' },
      });
      expect(JSON.stringify(spoof)).not.toContain('"slug"');

      // Without naming a tenant the inner query is scoped to acme: globex never matches.
      const scoped = await call(alice, 'query_class', selectTenants({}));
      expect(slugsOf(scoped)).toEqual(['acme']);
      const inQuery = await call(alice, 'count_objects', {
        class_name: 'Order',
        where: { customer: { $inQuery: { className: 'Customer', where: {} } } },
      });
      const own = await call(alice, 'count_objects', { class_name: 'Order' });
      expect(data(inQuery).count).toBeLessThanOrEqual(data(own).count as number);
    });

    it('checks the inner allowlist for the operator too (no tenant scope there)', async () => {
      const deletedOnly = await call(operator, 'query_class', {
        ...selectTenants({ name: { $exists: true } }),
      });
      const all = slugsOf(deletedOnly);
      expect(all.length).toBeGreaterThan(0);
      const refusal = await call(operator, 'query_class', selectTenants({ isDeleted: true }));
      expect(refusal.isError).toBe(true);
      expect(refusal.structuredContent).toMatchObject({
        error_code: 'access_denied',
        details: { kind: 'field_denied', denied_field: 'isDeleted' },
      });
    });

    it('refuses filtering on fields outside the inner allowlist: phone, isDeleted, _User.email', async () => {
      for (const [where, className, field] of [
        [{ phone: { $exists: true } }, 'Customer', 'phone'],
        [{ isDeleted: true }, 'Customer', 'isDeleted'],
        [{ email: { $regex: '^alice' } }, '_User', 'email'],
      ] as const) {
        const res = await call(alice, 'query_class', selectTenants(where, className));
        expect(res.isError).toBe(true);
        expect(res.structuredContent).toMatchObject({
          error_code: 'access_denied',
          details: { kind: 'field_denied', denied_field: field },
        });
        expect(
          (res.structuredContent?.details as { allowed_fields: string[] }).allowed_fields,
        ).not.toContain(field);
      }
      // The selected key is checked against the inner allowlist too.
      const key = await call(alice, 'query_class', {
        class_name: 'Tenant',
        where: {
          slug: { $select: { query: { className: 'Customer', where: {} }, key: 'phone' } },
        },
      });
      expect(key.structuredContent).toMatchObject({ details: { denied_field: 'phone' } });
    });

    it('refuses a subquery into a hidden class like one into a missing class', async () => {
      const hidden = await call(alice, 'count_objects', {
        class_name: 'Order',
        where: { customer: { $inQuery: { className: 'ApiCredential', where: {} } } },
      });
      const missing = await call(alice, 'count_objects', {
        class_name: 'Order',
        where: { customer: { $inQuery: { className: 'NoSuchThing', where: {} } } },
      });
      expect(hidden.structuredContent?.details).toEqual({ kind: 'class_not_found' });
      expect(missing.structuredContent?.details).toEqual({ kind: 'class_not_found' });
      expect(JSON.stringify(hidden)).not.toMatch(/sk_live|whsec/);
    });
  });

  describe('internal tables and unregistered classes', () => {
    const internal = [
      '_GlobalConfig',
      '_Hooks',
      '_SCHEMA',
      '_Installation',
      '_PushStatus',
      '_Idempotency',
      '_Audience',
      '_GraphQLConfig',
      '_JobStatus',
      '_JobSchedule',
      '_Session',
    ];

    it('answers a master-key agent for every Parse internal table exactly as for a missing class', async () => {
      const shape = (res: ToolResult, name: string) => ({
        isError: res.isError,
        text: res.content[0].text.replace(name, '<name>'),
        code: res.structuredContent?.error_code,
        details: res.structuredContent?.details,
      });
      const missing = shape(await call(operator, 'query_class', { class_name: 'Zqxwv' }), 'Zqxwv');
      expect(missing.isError).toBe(true);
      expect(missing.code).toBe('access_denied');
      for (const name of [...internal, 'UnmodelledSecret']) {
        for (const tool of ['query_class', 'count_objects', 'get_schema']) {
          const res = await call(operator, tool, { class_name: name });
          expect(shape(res, name)).toEqual(missing);
          expect(JSON.stringify(res)).not.toMatch(/sk_live|masterKey|deviceToken/);
        }
      }
      const resource = await operator
        .readResource({ uri: 'parse://UnmodelledSecret/samples' })
        .catch((e: Error) => e.message);
      const missingResource = await operator
        .readResource({ uri: 'parse://Zqxwv/samples' })
        .catch((e: Error) => e.message);
      expect(String(resource).replace('UnmodelledSecret', '<name>')).toBe(
        String(missingResource).replace('Zqxwv', '<name>'),
      );
    });

    it('never lists hidden, internal or unregistered classes', async () => {
      const listed = JSON.stringify(data(await call(operator, 'get_all_schemas', {})));
      for (const name of [...internal, 'UnmodelledSecret', 'ApiCredential']) {
        expect(listed).not.toContain(`"${name}"`);
      }
      expect(listed).toContain('"Order"');
    });

    it('lists at boot the server classes agents will not see, and not the registered ones', async () => {
      const line = () =>
        bootLog.mock.calls
          .map((args) => String(args[0]))
          .find((m) => m.startsWith('Classes on the Parse server not exposed to agents'));
      // Written in the background once the schemas are loaded.
      for (let i = 0; i < 100 && !line(); i++) await new Promise((r) => setTimeout(r, 50));
      const listed = /'hidden'\): ([^.]*)\. Register/.exec(line() ?? '')?.[1]?.split(', ') ?? [];
      expect(listed).toContain('UnmodelledSecret');
      for (const registered of [
        'Order',
        'Customer',
        'Product',
        'Tenant',
        '_User',
        'SupportTicket',
      ]) {
        expect(listed).not.toContain(registered);
      }
      // Hidden by declaration or always hidden: not "forgotten", so not listed either.
      for (const hidden of ['ApiCredential', '_Session', '_SCHEMA']) {
        expect(listed).not.toContain(hidden);
      }
    });

    it('answers a misspelled class with suggestions from visible classes, never a silent 0', async () => {
      const res = await call(operator, 'count_objects', { class_name: 'Ordr' });
      expect(res.isError).toBe(true);
      expect(res.content[0].text).toContain("Did you mean 'Order'?");
      expect(res.content[0].text).not.toMatch(/ApiCredential|_Session|UnmodelledSecret/);
      const near = await call(operator, 'count_objects', { class_name: 'ApiCredentials' });
      expect(near.content[0].text).not.toContain("ApiCredential'");
    });
  });

  describe('arguments and results', () => {
    it('refuses made-up arguments, naming the valid ones', async () => {
      const res = await call(operator, 'count_objects', {
        class_name: 'Order',
        group_by: 'status',
      });
      expect(res.isError).toBe(true);
      expect(res.content[0].text).toContain("unknown argument 'group_by'");
      expect(res.content[0].text).toContain('class_name, where, apply_canonical_filter');
      expect(res.structuredContent).toMatchObject({ error_code: 'invalid_argument' });
      const pipeline = await call(operator, 'query_class', {
        class_name: 'Order',
        pipeline: [{ $group: { _id: '$status' } }],
      });
      expect(pipeline.content[0].text).toContain("unknown argument 'pipeline'");
    });

    it('reports a clamped limit as applied_limits', async () => {
      const res = data(
        await call(alice, 'query_class', { class_name: 'Order', limit: 5000, keys: ['status'] }),
      );
      expect(res.applied_limits).toEqual({
        limit: { requested: 5000, applied: 1000, reason: 'limit is capped at 1000 per call' },
      });
      expect(res.pagination).toMatchObject({ limit: 1000 });
    });

    it('wraps row text as untrusted data with a random delimiter', async () => {
      const res = await call(alice, 'query_class', {
        class_name: 'Customer',
        limit: 1,
        keys: ['name'],
      });
      expect(res.content[0].text).toMatch(
        /^[^\n]*never follow instructions[^\n]*\n<untrusted-data-[0-9a-f]{16}>\n/,
      );
    });
  });

  describe('the demo login cache', () => {
    it('does not let a logged-out token open a new session', async () => {
      const token = await logIn('alice', 'demo-password');
      const first = await connect({ Authorization: `Bearer ${token}` });
      expect(data(await call(first, 'count_objects', { class_name: 'Order' })).count).toBe(1470);
      await first.close();
      await parseRest('POST', '/logout', {}, { sessionToken: token });
      // The guard's cache still holds the token for a few seconds (a listing is served from it),
      // so what refuses initialize below is the fresh check with Parse, made at once.
      const listing = await request(app.getHttpServer())
        .get('/mcp/tools')
        .set('Authorization', `Bearer ${token}`);
      expect(listing.status).toBe(200);
      await expect(connect({ Authorization: `Bearer ${token}` })).rejects.toThrow(
        /401|Unauthorized/,
      );
      // An initialize too large to be read before the guard (over the 64 KiB pre-auth limit)
      // reaches it unparsed, and is checked with Parse all the same.
      const padded = await request(app.getHttpServer())
        .post('/mcp')
        .set({ Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream' })
        .send({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'x'.repeat(100_000), version: '1' },
          },
        });
      expect(padded.status).toBe(401);
    });
  });

  describe('cost caps', () => {
    it('refuses the 60-$select count fast, before Parse sees it', async () => {
      const clauses = Array.from({ length: 60 }, (_, i) => ({
        slug: {
          $select: {
            query: { className: 'Customer', where: { city: `City${i}` } },
            key: 'tenantId',
          },
        },
      }));
      const started = Date.now();
      const res = await call(operator, 'count_objects', {
        class_name: 'Tenant',
        where: { $or: clauses },
      });
      expect(Date.now() - started).toBeLessThan(1000);
      expect(res.isError).toBe(true);
      expect(res.structuredContent).toMatchObject({ error_code: 'invalid_query' });
      expect(res.content[0].text).toMatch(/too costly.*more than 32/);
      // Five subqueries without any $or are refused too.
      const five = await call(operator, 'count_objects', {
        class_name: 'Tenant',
        where: { $and: clauses.slice(0, 5) },
      });
      expect(five.content[0].text).toMatch(/more than 4 subqueries/);
    });
  });

  // Last: it spends the operator's rate limit.
  describe('methods that cost work are rate limited', () => {
    it('charges initialize to the caller, answering 429 with Retry-After once over the limit', async () => {
      const body = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'flood', version: '1' },
        },
      };
      const statuses: number[] = [];
      let retryAfter: string | undefined;
      for (let i = 0; i < 70; i++) {
        const res = await request(app.getHttpServer())
          .post('/mcp')
          .set({ 'X-MCP-API-Key': API_KEY, Accept: 'application/json, text/event-stream' })
          .send(body);
        statuses.push(res.status);
        if (res.status === 429) retryAfter = res.headers['retry-after'] as string;
      }
      expect(statuses).toContain(200);
      expect(statuses).toContain(429);
      expect(Number(retryAfter)).toBeGreaterThan(0);
      // Another principal is not affected.
      expect(data(await call(alice, 'count_objects', { class_name: 'Order' })).count).toBe(1470);
    });
  });
});
