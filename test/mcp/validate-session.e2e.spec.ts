import request from 'supertest';
import { createUser } from '../harness/fixtures';
import { parseRest } from '../harness/parse-rest';
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
