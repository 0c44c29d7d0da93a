import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ParseAgentFactory } from 'nestjs-parse-agent';
import {
  startStandaloneMcpServer,
  unwrapUntrusted,
  type StandaloneMcpServer,
  type StandaloneMcpServerOptions,
} from 'nestjs-parse-agent/mcp';
import { apiKeyMatches } from 'nestjs-parse-agent/nest/mcp/standalone-server';
import request from 'supertest';
import { findFreePort } from '../../src/embedded/free-port';
import { createObject, createUser } from '../harness/fixtures';
import { testParseConfig, testParseConnection } from '../harness/parse-rest';
import { eventually } from './mcp-test-app';

const parse = () => {
  const cfg = testParseConfig();
  return { serverURL: cfg.serverURL, appId: cfg.appId, masterKey: cfg.masterKey };
};

describe('startStandaloneMcpServer', () => {
  let server: StandaloneMcpServer;
  const className = `HttpStandalone${Date.now().toString(36)}`;

  beforeAll(async () => {
    await createObject(className, { label: 'one' });
    server = await startStandaloneMcpServer({
      parse: parse(),
      port: 0,
      apiKey: 'sekret-key',
      // A scratch class without a model: this suite is about the server, not class exposure.
      unregisteredClasses: 'visible',
      logger: false,
      suppressSecurityBanners: true,
    });
  });
  afterAll(() => server.close());

  it('binds 127.0.0.1 by default and serves /health without a key', async () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const res = await request(server.url).get('/health');
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"status":"ok","mcp_enabled":true}');
  });

  it('requires X-MCP-API-Key on /tools', async () => {
    for (const key of [undefined, '', 'wrong', 'sekret-key-but-longer']) {
      const req = request(server.url).get('/tools');
      const res = await (key === undefined ? req : req.set('X-MCP-API-Key', key));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized: invalid or missing API key' });
    }
    const ok = await request(server.url).get('/tools').set('X-MCP-API-Key', 'sekret-key');
    expect(ok.status).toBe(200);
    const names = (ok.body as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain('query_class');
    expect(names).not.toContain('create_object');
  });

  it('answers /mcp without the key with the fixed 401 body', async () => {
    const res = await request(server.url)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('X-MCP-API-Key', 'nope')
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(res.status).toBe(401);
    expect(res.text).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized"}}',
    );
    const sub = await request(server.url).post('/mcp/elsewhere').send({});
    expect(sub.status).toBe(404);
    expect(sub.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32601, message: expect.stringMatching(/^Not Found: .*\/mcp/) },
    });
  });

  it('serves an MCP client that sends the key', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { 'X-MCP-API-Key': 'sekret-key' } },
    });
    const client = new Client({ name: 'standalone-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({
        name: 'count_objects',
        arguments: { class_name: className },
      });
      expect(result.isError).toBe(false);
      const text = (result.content as Array<{ text: string }>)[0].text;
      expect(JSON.parse(unwrapUntrusted(text)).count).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe('startStandaloneMcpServer: binding and keys', () => {
  const saved = process.env.MCP_API_KEY;
  afterEach(() => {
    if (saved === undefined) delete process.env.MCP_API_KEY;
    else process.env.MCP_API_KEY = saved;
  });

  it('refuses a non-loopback host without an API key, naming both ways to set one', async () => {
    delete process.env.MCP_API_KEY;
    for (const host of ['0.0.0.0', '::', '192.168.1.20']) {
      await expect(
        startStandaloneMcpServer({ parse: parse(), host, port: 0, apiKey: '', logger: false }),
      ).rejects.toThrow(/refusing to listen on .* without an API key.*apiKey.*MCP_API_KEY/);
    }
  });

  it('takes the key from MCP_API_KEY when none is passed', async () => {
    process.env.MCP_API_KEY = 'from-env';
    const server = await startStandaloneMcpServer({
      parse: parse(),
      port: 0,
      logger: false,
      suppressSecurityBanners: true,
    });
    try {
      expect((await request(server.url).get('/tools')).status).toBe(401);
      const ok = await request(server.url).get('/tools').set('X-MCP-API-Key', 'from-env');
      expect(ok.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('closes on SIGTERM when asked to handle signals', async () => {
    const server = await startStandaloneMcpServer({
      parse: parse(),
      port: 0,
      logger: false,
      suppressSecurityBanners: true,
      handleSignals: true,
    });
    const http = server.app.getHttpServer();
    expect(http.listening).toBe(true);
    process.emit('SIGTERM');
    await eventually(() => expect(http.listening).toBe(false));
    await server.close();
  });

  it('compares API keys in constant time over digests', () => {
    expect(apiKeyMatches('abc', 'abc')).toBe(true);
    expect(apiKeyMatches('abd', 'abc')).toBe(false);
    expect(apiKeyMatches('abcd', 'abc')).toBe(false);
    expect(apiKeyMatches('', 'abc')).toBe(false);
    expect(apiKeyMatches(undefined, 'abc')).toBe(false);
  });
});

describe('startStandaloneMcpServer: database: { kind, uri }', () => {
  const className = `HttpStandaloneDb${Date.now().toString(36)}`;
  let sessionToken: string;

  beforeAll(async () => {
    await createObject(className, { label: 'one' });
    await createObject(className, { label: 'one' });
    await createObject(className, { label: 'two' });
    sessionToken = (await createUser(`standalone-db-${Date.now().toString(36)}`)).sessionToken;
  });

  const start = (options: Partial<StandaloneMcpServerOptions>) =>
    startStandaloneMcpServer({
      // Session tokens are checked with the client key, as an app's users would send it.
      parse: testParseConnection(),
      port: 0,
      apiKey: 'sekret-key',
      unregisteredClasses: 'visible',
      logger: false,
      suppressSecurityBanners: true,
      ...options,
    });
  const groupBy = (server: StandaloneMcpServer) =>
    server.app
      .get(ParseAgentFactory)
      .create({ sessionToken })
      .execute('group_by', { class_name: className, field: 'label' });

  it('builds the direct path from the connection string: a user’s group_by runs there', async () => {
    // Without a direct path a session-token aggregate is refused (REST aggregate is master-key only).
    const without = await start({});
    try {
      const refused = await groupBy(without);
      expect(refused).toMatchObject({ success: false, error: expect.stringMatching(/postgres/) });
    } finally {
      await without.close();
    }
    const server = await start({
      database: { kind: 'postgres', uri: testParseConfig().databaseURI },
    });
    try {
      const grouped = await groupBy(server);
      expect(grouped).toMatchObject({ success: true });
      expect(JSON.stringify(grouped)).toMatch(/"one"[^}]*2|2[^}]*"one"/);
    } finally {
      await server.close();
    }
  });

  it('probes the database at start and names the setting, never the password', async () => {
    const port = await findFreePort();
    const failure = await start({
      database: { kind: 'postgres', uri: `postgres://u:pg-secret-pw@127.0.0.1:${port}/parse` },
    }).then(
      (server) => server.close().then(() => undefined),
      (error: Error) => error,
    );
    expect(failure?.message).toContain(`postgres.uri: PostgreSQL at 127.0.0.1:${port}`);
    expect(failure?.message).not.toContain('pg-secret-pw');
  });

  it('refuses a kind that is no built-in path, and the same database given twice', async () => {
    await expect(
      start({ database: { kind: 'mysql' as never, uri: 'mysql://h/db' } }),
    ).rejects.toThrow(
      /startStandaloneMcpServer: database must be \{ kind, uri \} with kind 'postgres' or 'mongo'/,
    );
    const uri = testParseConfig().databaseURI;
    await expect(start({ database: { kind: 'postgres', uri }, postgres: { uri } })).rejects.toThrow(
      /startStandaloneMcpServer: pass the database once/,
    );
  });
});
