import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AgentFields,
  AgentTenantScope,
  bindAgentToPrincipal,
  ParseAgentAuthGuard,
  ParseAgentModule,
  ParseClass,
  PARSE_AGENT_MODULE_OPTIONS,
  tenantOfUser,
  type ParseAgentModuleOptions,
  type TenantSource,
} from 'nestjs-parse-agent';
import { ParseSessionVerifier } from 'nestjs-parse-agent/auth';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { ParseRestClient } from 'nestjs-parse-agent/data/parse-rest/parse-rest-client';
import request from 'supertest';
import { SwitchableUpstream } from '../faults/switchable-upstream';
import { createObject, createRole, createUser, defineClass, logIn } from '../harness/fixtures';
import { parseRest, testParseConnection } from '../harness/parse-rest';

/** Role names unique to this run, so the suite does not depend on other suites' roles. */
const CREW = `crew${randomBytes(3).toString('hex')}`;
const ROLE_SOURCE: TenantSource = { fromRole: `{tenant}-${CREW}` };
const roleOf = (tenant: string) => `${tenant}-${CREW}`;
const OPERATOR_KEY = 'shipped-auth-operator-key';
const CACHE_TTL_MS = 600;

@ParseClass('AuthNote')
@AgentFields('text', 'tenantId')
@AgentTenantScope('tenantId', { bypass: (agent) => agent.usingMasterKey && !agent.tenantId })
class AuthNote {}

/** Stands in for @nestjs/config's ConfigService: the auth settings arrive through injection. */
@Injectable()
class Settings {
  constructor(readonly parseServerURL: string) {}
  get(key: 'OPERATOR_KEY' | 'SESSION_CACHE_MS'): string {
    return key === 'OPERATOR_KEY' ? OPERATOR_KEY : String(CACHE_TTL_MS);
  }
}

/** Counts the `/users/me` round trips the app makes (all its Parse traffic goes through here). */
class CountingParseClient extends ParseRestClient {
  usersMe = 0;
  override request<T>(...args: Parameters<ParseRestClient['request']>): Promise<T> {
    if (args[1] === '/users/me') this.usersMe++;
    return super.request<T>(...args);
  }
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  },
};

/**
 * The shipped guards and binding in a small app, against the real Parse Server: a bearer session
 * checked with Parse (timeout, short cache, fresh on initialize), the operator key, the tenant
 * from role membership, settings from forRootAsync, and no second /users/me for session counting.
 */
describe('shipped auth: ParseAgentAuthGuard + bindAgentToPrincipal on a real Parse Server', () => {
  let upstream: SwitchableUpstream;
  let app: INestApplication;
  let url: string;
  let parse: CountingParseClient;
  const ids: Record<string, string> = {};
  const passwords: Record<string, string> = {};

  beforeAll(async () => {
    suppressSecurityBanners();
    const real = testParseConnection();
    const target = new URL(real.serverURL);
    upstream = new SwitchableUpstream({ host: target.hostname, port: Number(target.port) });
    const front = `http://${await upstream.start()}${target.pathname}`;

    for (const name of ['ann', 'ben', 'cat', 'dan', 'eve', 'fay', 'gus']) {
      passwords[name] = `${name}-password`;
      ids[name] = (
        await createUser(`${name}-${CREW}`, passwords[name], {
          // What a client may write about itself decides nothing.
          tenantId: 'north',
        })
      ).objectId;
    }
    // dan inherits both tenant roles through a parent-of-all role: inheritance binds nobody.
    // eve is in no role at all.
    await createRole(`${CREW}-all`, { users: [ids.dan], acl: {} });
    await createRole(roleOf('north'), {
      users: [ids.ann, ids.cat, ids.fay, ids.gus],
      inheritedBy: [`${CREW}-all`],
      acl: {},
    });
    await createRole(roleOf('south'), {
      users: [ids.ben, ids.cat],
      inheritedBy: [`${CREW}-all`],
      acl: {},
    });

    await defineClass('AuthNote', { text: { type: 'String' }, tenantId: { type: 'String' } });
    for (const tenant of ['north', 'south']) {
      for (let i = 0; i < 3; i++) {
        await createObject('AuthNote', { text: `${tenant} note ${i}`, tenantId: tenant });
      }
    }

    @Module({
      providers: [{ provide: Settings, useValue: new Settings(front) }],
      exports: [Settings],
    })
    class SettingsModule {}

    const module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRootAsync({
          imports: [SettingsModule],
          inject: [Settings],
          useFactory: (settings: Settings): ParseAgentModuleOptions => ({
            parse: { ...real, serverURL: settings.parseServerURL },
            models: [AuthNote],
            auth: {
              apiKey: settings.get('OPERATOR_KEY'),
              session: { cacheTtlMs: Number(settings.get('SESSION_CACHE_MS')), timeoutMs: 1500 },
              tenant: ROLE_SOURCE,
            },
            agentFactory: bindAgentToPrincipal(),
          }),
          mcp: {
            path: '/mcp',
            guards: [ParseAgentAuthGuard],
            maxSessionsPerPrincipal: 2,
            initializeRateLimit: false,
          },
        }),
      ],
    })
      .overrideProvider(ParseRestClient)
      .useFactory({
        factory: (options: ParseAgentModuleOptions) => new CountingParseClient(options.parse),
        inject: [PARSE_AGENT_MODULE_OPTIONS],
      })
      .compile();
    app = module.createNestApplication({ logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/mcp`.replace('[::1]', '127.0.0.1');
    parse = app.get(ParseRestClient);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });
  beforeEach(() => {
    upstream.mode = 'forward';
    upstream.cut();
    app.get(ParseSessionVerifier).clear();
  });

  const login = (name: string) => logIn(`${name}-${CREW}`, passwords[name]);
  const post = (headers: Record<string, string>, body: unknown = INIT) =>
    request(app.getHttpServer())
      .post('/mcp')
      .set({ Accept: 'application/json, text/event-stream', ...headers })
      .send(body as object);

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'shipped-auth-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
    );
    return client;
  }

  async function tenantsSeen(client: Client): Promise<string[]> {
    const result = (await client.callTool({
      name: 'query_class',
      arguments: { class_name: 'AuthNote', keys: ['tenantId'], limit: 100 },
    })) as { isError?: boolean; content: Array<{ text: string }> };
    expect(result.isError).toBeFalsy();
    const rows = (
      JSON.parse(unwrapUntrusted(result.content[0].text)) as {
        results: Array<{ tenantId: string }>;
      }
    ).results;
    return [...new Set(rows.map((r) => r.tenantId))].sort();
  }

  describe('tenantOfUser (the library helper) reads direct role membership', () => {
    let client: ParseRestClient;
    beforeAll(() => {
      client = new ParseRestClient(testParseConnection());
    });
    afterAll(() => client.close());

    it('binds a member of exactly one tenant role to that tenant', async () => {
      expect(await tenantOfUser(client, ids.ann, ROLE_SOURCE)).toEqual({ tenantId: 'north' });
      expect(await tenantOfUser(client, ids.ben, ROLE_SOURCE)).toEqual({ tenantId: 'south' });
    });

    it('gives no tenant to a user in none, whatever their own row says, nor through inheritance', async () => {
      for (const name of ['dan', 'eve']) {
        const binding = await tenantOfUser(client, ids[name], ROLE_SOURCE);
        expect(binding.tenantId).toBeUndefined();
        expect(binding).toMatchObject({ reason: expect.stringContaining('no tenant role') });
      }
    });

    it('refuses a direct member of several tenant roles, naming them', async () => {
      const binding = await tenantOfUser(client, ids.cat, ROLE_SOURCE);
      expect(binding.tenantId).toBeUndefined();
      expect(binding).toMatchObject({
        reason: `The user is a direct member of several tenant roles (${roleOf('north')}, ${roleOf('south')}); keep exactly one.`,
      });
    });

    it('takes a role function as well as a pattern', async () => {
      const fromRole = (name: string) =>
        name === roleOf('south') ? 'south-by-function' : undefined;
      expect(await tenantOfUser(client, ids.ben, { fromRole })).toEqual({
        tenantId: 'south-by-function',
      });
    });

    it('reads a protected user field with the master key when told to', async () => {
      const field = `org${CREW}`;
      await parseRest('PUT', `/users/${ids.dan}`, { [field]: 'north' }, { masterKey: true });
      expect(await tenantOfUser(client, ids.dan, { fromUserField: field })).toEqual({
        tenantId: 'north',
      });
      expect(await tenantOfUser(client, ids.eve, { fromUserField: field })).toMatchObject({
        reason: expect.stringContaining(`_User.${field} is empty`),
      });
    });
  });

  it("serves a valid session with the user's own tenant only", async () => {
    const client = await connect({ Authorization: `Bearer ${await login('ann')}` });
    expect(await tenantsSeen(client)).toEqual(['north']);
    await client.close();
    const other = await connect({ Authorization: `Bearer ${await login('ben')}` });
    expect(await tenantsSeen(other)).toEqual(['south']);
    await other.close();
  });

  it('refuses users in no tenant role or in several with 401, whatever their row claims', async () => {
    for (const name of ['cat', 'dan', 'eve']) {
      const res = await post({ Authorization: `Bearer ${await login(name)}` });
      expect(res.status).toBe(401);
      expect(JSON.stringify(res.body)).not.toMatch(/tenant|north|south/i);
    }
  });

  it('refuses a made-up token, and a logged-out one at once on initialize and after the cache TTL otherwise', async () => {
    expect((await post({ Authorization: 'Bearer r:made-up' })).status).toBe(401);

    const token = await login('ann');
    const client = await connect({ Authorization: `Bearer ${token}` });
    expect(await tenantsSeen(client)).toEqual(['north']);
    await parseRest('POST', '/logout', {}, { sessionToken: token });
    // Opening a session always asks Parse: refused at once.
    expect((await post({ Authorization: `Bearer ${token}` })).status).toBe(401);
    // Once the short cache has expired, every request is refused.
    await new Promise((resolve) => setTimeout(resolve, CACHE_TTL_MS + 100));
    await expect(tenantsSeen(client)).rejects.toThrow(/401|Unauthorized/);
    const listing = await request(app.getHttpServer())
      .get('/mcp/tools')
      .set('Authorization', `Bearer ${token}`);
    expect(listing.status).toBe(401);
  });

  it('answers 503 with Retry-After while Parse Server is down, and serves the same token once it is back', async () => {
    const token = await login('gus');
    upstream.mode = 'down';
    upstream.cut();
    const down = await post({ Authorization: `Bearer ${token}` });
    expect(down.status).toBe(503);
    expect(down.headers['retry-after']).toBeDefined();
    upstream.mode = 'stall';
    upstream.cut();
    const started = Date.now();
    const stalled = await post({ Authorization: `Bearer ${token}` });
    expect(stalled.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The failure was not remembered as a refusal.
    upstream.mode = 'forward';
    expect((await post({ Authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it('gives the right operator key a readonly master-key agent across tenants; a wrong one 401', async () => {
    expect((await post({ 'X-MCP-API-Key': `${OPERATOR_KEY}x` })).status).toBe(401);
    expect((await post({ 'X-MCP-API-Key': OPERATOR_KEY.slice(0, -1) })).status).toBe(401);
    expect((await post({ 'X-MCP-API-Key': '' })).status).toBe(401);
    const operator = await connect({ 'X-MCP-API-Key': OPERATOR_KEY });
    expect(await tenantsSeen(operator)).toEqual(['north', 'south']);
    const tools = (await operator.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('query_class');
    for (const write of ['create_object', 'update_object', 'delete_object', 'create_class'])
      expect(tools).not.toContain(write);
    await operator.close();
  });

  it("counts MCP sessions per user from the guard's user id, without a second /users/me", async () => {
    // Two tokens of one user share the per-user cap (2): the key is the user, not the token.
    const [first, second, third] = [await login('fay'), await login('fay'), await login('fay')];
    const before = parse.usersMe;
    const a = await post({ Authorization: `Bearer ${first}` });
    const b = await post({ Authorization: `Bearer ${second}` });
    expect([a.status, b.status]).toEqual([200, 200]);
    // One /users/me per initialize: the guard's fresh check, nothing more for the session count.
    expect(parse.usersMe - before).toBe(2);
    const c = await post({ Authorization: `Bearer ${third}` });
    expect(c.status).toBe(429);
    for (const [res, token] of [
      [a, first],
      [b, second],
    ] as const) {
      const ended = await request(app.getHttpServer())
        .delete('/mcp')
        .set({
          Authorization: `Bearer ${token}`,
          'Mcp-Session-Id': String(res.headers['mcp-session-id']),
        });
      expect(ended.status).toBeLessThan(300);
    }
    // With a session ended there is room again.
    expect((await post({ Authorization: `Bearer ${third}` })).status).toBe(200);
  });
});
