import request from 'supertest';
import { SwitchableUpstream } from '../faults/switchable-upstream';
import { createUser } from '../harness/fixtures';
import { parseRest, testParseConnection } from '../harness/parse-rest';
import { startMcpTestApp, type McpTestApp } from './mcp-test-app';

/**
 * An agentFactory that returns options with validateSession: true: the endpoint builds the agent
 * with ParseAgentFactory.createValidated, so a logged-out token is answered 401 before any tool
 * runs, and a live one is served.
 */
const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };
const run = Date.now().toString(36);

describe('MCP endpoint: agentFactory with validateSession (Nest e2e, real Parse Server)', () => {
  let t: McpTestApp;
  let runs = 0;
  const probe = `vs_e2e_probe_${run}`;

  beforeAll(async () => {
    t = await startMcpTestApp({
      agentFactory: (req) => ({
        sessionToken: String(req.headers['x-test-session'] ?? ''),
        validateSession: true,
      }),
    });
    t.tools.register({
      name: probe,
      description: 'Counts its runs.',
      inputSchema: { type: 'object', properties: {} },
      handler: () => ({ runs: ++runs }),
    });
  });
  afterAll(() => t.close());

  const post = (token: string, body: object) =>
    request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('x-test-session', token)
      .send(body);

  it('serves a live session', async () => {
    const user = await createUser(`vs_e2e_live_${run}`);
    const res = await post(user.sessionToken, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('answers 401 for a logged-out token, and the tool never runs', async () => {
    const user = await createUser(`vs_e2e_out_${run}`);
    await parseRest('POST', '/logout', {}, { sessionToken: user.sessionToken });
    const res = await post(user.sessionToken, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: probe, arguments: {} },
    });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: -32001, message: 'Unauthorized' } });
    expect(runs).toBe(0);
  });
});

/**
 * Parse Server unreachable while a session is checked: the token may be good, so the answer is a
 * 503 with Retry-After (not the 401 of a bad token, not a 500), the tool never runs, and the
 * endpoint serves again once Parse is back. A real front in the way of the real Parse Server,
 * switched to refusing connections.
 */
describe('MCP endpoint: validateSession while Parse Server is unreachable', () => {
  let t: McpTestApp;
  let upstream: SwitchableUpstream;
  let runs = 0;
  const probe = `vs_down_probe_${run}`;

  beforeAll(async () => {
    const real = testParseConnection();
    const url = new URL(real.serverURL);
    upstream = new SwitchableUpstream({ host: url.hostname, port: Number(url.port) });
    const front = await upstream.start();
    t = await startMcpTestApp({
      agentFactory: (req) => ({
        sessionToken: String(req.headers['x-test-session'] ?? ''),
        validateSession: true,
      }),
      module: {
        parse: { ...real, serverURL: `http://${front}${url.pathname}`, requestTimeoutMs: 1_000 },
      },
    });
    t.tools.register({
      name: probe,
      description: 'Counts its runs.',
      inputSchema: { type: 'object', properties: {} },
      handler: () => ({ runs: ++runs }),
    });
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  it('answers 503 with Retry-After, runs nothing, and serves once Parse is back', async () => {
    const user = await createUser(`vs_down_${run}`);
    const call = () =>
      request(t.app.getHttpServer())
        .post('/mcp')
        .set(JSON_HEADERS)
        .set('x-test-session', user.sessionToken)
        .send({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: probe, arguments: {} },
        });
    upstream.mode = 'down';
    // Parse going down closes its connections too; without this, an idle keep-alive connection the
    // app opened at boot (its schema reads) would still reach Parse.
    upstream.cut();
    const down = await call();
    expect(down.status).toBe(503);
    expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    expect(down.body).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringMatching(/could not check the session token/) },
    });
    expect(runs).toBe(0);

    upstream.mode = 'forward';
    const back = await call();
    expect(back.status).toBe(200);
    expect(runs).toBe(1);
  }, 30_000);
});
