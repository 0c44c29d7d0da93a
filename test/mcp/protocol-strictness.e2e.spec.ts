import request from 'supertest';
import { startMcpTestApp, type McpTestApp } from './mcp-test-app';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

describe('MCP endpoint: JSON-RPC strictness', () => {
  let t: McpTestApp;
  let runs = 0;

  beforeAll(async () => {
    t = await startMcpTestApp();
    t.tools.register({
      name: 'strict_counter',
      description: 'Counts its runs.',
      handler: () => ({ run: ++runs }),
    });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    runs = 0;
  });

  const post = (body: unknown) =>
    request(t.app.getHttpServer()).post('/mcp').set(JSON_HEADERS).send(JSON.stringify(body));
  const call = { method: 'tools/call', params: { name: 'strict_counter', arguments: {} } };

  it('runs the tool for a request with an id', async () => {
    const res = await post({ jsonrpc: '2.0', id: 7, ...call });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(7);
    expect(runs).toBe(1);
  });

  it('answers a tools/call notification (no id) with 202 and no body, and never runs the tool', async () => {
    const res = await post({ jsonrpc: '2.0', ...call });
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(runs).toBe(0);
  });

  it.each([
    ['an object id', { id: { n: 1 } }],
    ['an array id', { id: [1] }],
    ['a boolean id', { id: true }],
    ['a null id', { id: null }],
  ])('refuses %s with -32600 and does not run the tool', async (_label, extra) => {
    const res = await post({ jsonrpc: '2.0', ...call, ...extra });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: id must be a string or a number' },
    });
    expect(runs).toBe(0);
  });

  it.each([
    ['missing', {}],
    ['"1.0"', { jsonrpc: '1.0' }],
    ['a number', { jsonrpc: 2 }],
  ])('refuses jsonrpc %s with -32600, echoing the id', async (_label, version) => {
    const res = await post({ id: 'abc', ...call, ...version });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      id: 'abc',
      error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' },
    });
    expect(runs).toBe(0);
  });

  it('echoes the request id in the 404 for an unknown session', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Mcp-Session-Id', 'f'.repeat(32))
      .send({ jsonrpc: '2.0', id: 'req-42', ...call });
    expect(res.status).toBe(404);
    expect(res.body.id).toBe('req-42');
    expect(res.body.error.code).toBe(-32000);
    expect(runs).toBe(0);
  });
});
