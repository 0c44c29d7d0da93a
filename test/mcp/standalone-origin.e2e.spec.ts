import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AgentEvents, type ToolCallEvent } from 'nestjs-parse-agent';
import { startStandaloneMcpServer, type StandaloneMcpServer } from 'nestjs-parse-agent/mcp';
import request from 'supertest';
import { testParseConfig } from '../harness/parse-rest';

const parse = () => {
  const { serverURL, appId, masterKey } = testParseConfig();
  return { serverURL, appId, masterKey };
};

const FOREIGN = [
  'https://evil.example',
  'http://localhost.evil.example:3001',
  'http://127.0.0.1.evil.example',
  'http://192.168.1.20:8080',
  'null',
];
const LOOPBACK = [
  'http://localhost:5173',
  'https://localhost',
  'http://127.0.0.1:3001',
  'http://[::1]:8080',
];

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  },
};
const toolCall = {
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'get_all_schemas', arguments: {} },
};
const mcpHeaders = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

/**
 * A keyless standalone server on loopback acts with the master key for whoever reaches its port.
 * A web page elsewhere, running in the operator's browser, is refused by its Origin (403) on every
 * path, and nothing runs; pages on this machine and clients that send no Origin are served. The
 * Host check against DNS rebinding still applies.
 */
describe('keyless standalone server: browser Origins', () => {
  let server: StandaloneMcpServer;
  const calls: ToolCallEvent[] = [];

  beforeAll(async () => {
    delete process.env.MCP_API_KEY;
    server = await startStandaloneMcpServer({
      parse: parse(),
      port: 0,
      apiKey: '',
      logger: false,
      suppressSecurityBanners: true,
    });
    server.app.get(AgentEvents).toolCalls$.subscribe((event) => calls.push(event));
  });
  afterAll(() => server?.close());

  it('answers 403 to a page on another origin, on /mcp, /tools and /health, and runs nothing', async () => {
    for (const origin of FOREIGN) {
      for (const body of [initialize, toolCall]) {
        const res = await request(server.url)
          .post('/mcp')
          .set({ ...mcpHeaders, Origin: origin })
          .send(body);
        expect(res.status).toBe(403);
        expect(res.body.error.message).toMatch(/^Origin not allowed/);
      }
      expect((await request(server.url).get('/tools').set('Origin', origin)).status).toBe(403);
      expect((await request(server.url).get('/health').set('Origin', origin)).status).toBe(403);
      const stream = await request(server.url)
        .get('/mcp')
        .set({ Accept: 'text/event-stream', Origin: origin });
      expect(stream.status).toBe(403);
    }
    expect(calls).toEqual([]);
  });

  it('serves pages on this machine and clients without an Origin', async () => {
    for (const origin of LOOPBACK) {
      const res = await request(server.url)
        .post('/mcp')
        .set({ ...mcpHeaders, Origin: origin })
        .send(toolCall);
      expect(res.status).toBe(200);
      expect(res.text).toMatch(/"result":\{/);
    }
    // The subscription sees calls that ran: the empty list above was no accident.
    expect(calls.map((c) => [c.tool, c.success])).toEqual(
      LOOPBACK.map(() => ['get_all_schemas', true]),
    );
    const client = new Client({ name: 'no-origin', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it('keeps the Host check (DNS rebinding), with or without an Origin', async () => {
    const rebound = await request(server.url)
      .post('/mcp')
      .set({ ...mcpHeaders, Host: 'evil.example' })
      .send(initialize);
    expect(rebound.status).toBe(403);
    expect(rebound.body.error.message).toBe('Host not allowed');
  });
});

describe('standalone server Origins when the operator decided', () => {
  it('with allowedOrigins, that list rules instead of the loopback default', async () => {
    const server = await startStandaloneMcpServer({
      parse: parse(),
      port: 0,
      apiKey: '',
      allowedOrigins: ['https://tools.example.com'],
      logger: false,
      suppressSecurityBanners: true,
    });
    try {
      const as = (origin: string) =>
        request(server.url)
          .post('/mcp')
          .set({ ...mcpHeaders, Origin: origin })
          .send(initialize);
      expect((await as('https://tools.example.com')).status).toBe(200);
      expect((await as('https://evil.example')).status).toBe(403);
    } finally {
      await server.close();
    }
  });

  it('with an API key, a page must hold the key; the Origin default does not apply', async () => {
    const server = await startStandaloneMcpServer({
      parse: parse(),
      port: 0,
      apiKey: 'origin-suite-key',
      logger: false,
      suppressSecurityBanners: true,
    });
    try {
      const res = (key?: string) =>
        request(server.url)
          .post('/mcp')
          .set({
            ...mcpHeaders,
            Origin: 'https://evil.example',
            ...(key ? { 'X-MCP-API-Key': key } : {}),
          })
          .send(initialize);
      expect((await res()).status).toBe(401);
      expect((await res('origin-suite-key')).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
