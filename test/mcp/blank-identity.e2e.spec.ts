import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CanActivate, Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { ParseAgentConsoleModule, ParseAgentModule, type McpRequest } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { seedDemo } from '../harness/demo-data';
import { findRows, parseRest, testParseConnection } from '../harness/parse-rest';

/** Everyone passes: the agentFactory alone decides who the caller is, as in many host apps. */
@Injectable()
class OpenGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

/** The pattern issue 31 found in the wild: the header, trimmed, as the session token. */
const headerAgentFactory = (req: McpRequest) => ({
  sessionToken: String(req.headers['x-session-token'] ?? '').trim(),
});

const JSON_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

const UNAUTHORIZED = { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized' } };

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
}

/**
 * Issue 31, item 1, over MCP with the real Parse Server and the demo data: an agentFactory that
 * returns a blank session token gets the fixed 401 and never reads what the master key would
 * (protected emails, other users' and admin-only tickets, ApiCredential rows). Before the fix
 * such a request ran as a master-key agent.
 */
describe('MCP endpoint: a blank session token is a 401, never the master key', () => {
  let app: INestApplication;
  let url: string;
  let alice: string;
  /** What the master key reads, from Parse REST: none of it may reach a blank-token caller. */
  const masterOnly = { emails: [] as string[], apiKeys: [] as string[], tickets: 0 };
  let aliceTickets = 0;

  beforeAll(async () => {
    suppressSecurityBanners();
    ({ alice } = await seedDemo());
    const master = { masterKey: true } as const;
    masterOnly.emails = (await findRows('Customer', {}, master, { limit: '1000' })).map(
      (row) => row.email as string,
    );
    masterOnly.apiKeys = (await findRows('ApiCredential', {}, master)).map(
      (row) => row.apiKey as string,
    );
    masterOnly.tickets = (await findRows('SupportTicket', {}, master, { limit: '1000' })).length;
    aliceTickets = (await findRows('SupportTicket', {}, { sessionToken: alice }, { limit: '1000' }))
      .length;

    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          rateLimiter: { check: () => undefined },
          suppressSecurityBanners: true,
          // No models: every class on the server is visible, so the master key would read all.
          unregisteredClasses: 'visible',
          agentFactory: headerAgentFactory,
          mcp: { path: '/mcp' },
        }),
        ParseAgentConsoleModule.forRoot({ guards: [OpenGuard] }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/mcp`;
  }, 120_000);

  afterAll(() => app?.close());

  it('the oracle: the master key reads more than alice, so a fallback to it would show', async () => {
    expect(masterOnly.emails.filter(Boolean).length).toBeGreaterThan(0);
    expect(masterOnly.apiKeys.length).toBeGreaterThan(0);
    expect(masterOnly.tickets).toBeGreaterThan(aliceTickets);
    // Parse itself refuses alice the credentials and hides customers' emails from her.
    await expect(
      parseRest('GET', '/classes/ApiCredential', undefined, { sessionToken: alice }),
    ).rejects.toThrow();
    const hers = await findRows('Customer', {}, { sessionToken: alice }, { limit: '5' });
    expect(hers.length).toBeGreaterThan(0);
    expect(hers.every((row) => row.email === undefined)).toBe(true);
  });

  it('serves alice through the same agentFactory with exactly what Parse gives her', async () => {
    const client = await connect({ 'X-Session-Token': ` ${alice} ` });
    try {
      const count = await call(client, 'count_objects', { class_name: 'SupportTicket' });
      expect(JSON.parse(unwrapUntrusted(count.content[0].text))).toMatchObject({
        count: aliceTickets,
      });
      const credentials = await call(client, 'query_class', { class_name: 'ApiCredential' });
      expect(credentials.isError).toBe(true);
      expect(JSON.stringify(credentials)).not.toMatch(apiKeyPattern());
    } finally {
      await client.close();
    }
  });

  it('answers every request with a blank or missing token with the fixed 401, and reads nothing', async () => {
    const calls = [
      { method: 'initialize', params: initializeParams() },
      { method: 'tools/list' },
      {
        method: 'tools/call',
        params: { name: 'count_objects', arguments: { class_name: 'SupportTicket' } },
      },
      {
        method: 'tools/call',
        params: { name: 'query_class', arguments: { class_name: 'ApiCredential' } },
      },
      {
        method: 'tools/call',
        params: { name: 'query_class', arguments: { class_name: 'Customer', keys: ['email'] } },
      },
    ];
    for (const header of [undefined, '', '   ', '\t']) {
      for (const [i, rpc] of calls.entries()) {
        let req = request(app.getHttpServer()).post('/mcp').set(JSON_HEADERS);
        if (header !== undefined) req = req.set('X-Session-Token', header);
        const res = await req.send({ jsonrpc: '2.0', id: i + 1, ...rpc });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
        expect(res.text).not.toMatch(apiKeyPattern());
        expect(res.text).not.toContain('@');
        expect(res.text).not.toContain(String(masterOnly.tickets));
      }
    }
  });

  it('refuses the official MCP client with a blank token at initialize', async () => {
    await expect(connect({ 'X-Session-Token': '  ' })).rejects.toThrow(/401|Unauthorized/);
  });

  it('refuses the console API the same way (it runs the same agentFactory)', async () => {
    for (const header of ['', '  ']) {
      for (const path of ['/console/api/identity', '/console/api/tools', '/console/api/policy']) {
        const res = await request(app.getHttpServer()).get(path).set('X-Session-Token', header);
        expect(res.status).toBe(401);
        expect(res.text).not.toMatch(apiKeyPattern());
      }
      const run = await request(app.getHttpServer())
        .post('/console/api/tools/query_class')
        .set('X-Session-Token', header)
        .send({ arguments: { class_name: 'ApiCredential' } });
      expect(run.status).toBe(401);
      expect(run.text).not.toMatch(apiKeyPattern());
    }
  });

  /** Any ApiCredential key the master key can read. */
  function apiKeyPattern(): RegExp {
    return new RegExp(
      masterOnly.apiKeys.map((k) => k.replace(/[$^.*+?()[\]{}|\\]/g, '\\$&')).join('|'),
    );
  }

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'blank-identity', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
    );
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown>) {
    return (await client.callTool({ name, arguments: args })) as unknown as ToolResult;
  }
});

function initializeParams() {
  return {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'blank-identity', version: '1.0.0' },
  };
}
