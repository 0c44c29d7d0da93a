import request from 'supertest';
import { eventually, startMcpTestApp, type McpTestApp } from './mcp-test-app';

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

describe('MCP endpoint: protocol edges (MCP-Protocol-Version, notifications with ids)', () => {
  let t: McpTestApp;
  const aborted: string[] = [];
  let started = 0;

  beforeAll(async () => {
    t = await startMcpTestApp();
    t.tools.register({
      name: 'edge_wait',
      description: 'Waits until its call is cancelled.',
      handler: (_args, { signal }) =>
        new Promise((resolve) => {
          started++;
          signal.addEventListener('abort', () => {
            aborted.push(String(signal.reason?.message ?? signal.reason));
            resolve({ cancelled: true });
          });
        }),
    });
  });
  afterAll(() => t.close());

  const post = (body: object, headers: Record<string, string> = {}) =>
    request(t.app.getHttpServer()).post('/mcp').set(JSON_HEADERS).set(headers).send(body);
  const initialize = (protocolVersion: string, headers: Record<string, string> = {}) =>
    post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'edge', version: '1' } },
      },
      headers,
    );

  it('negotiates initialize from the body whatever its MCP-Protocol-Version header says', async () => {
    for (const header of ['1999-01-01', '2026-07-28', 'garbage']) {
      const res = await initialize('2025-03-26', { 'MCP-Protocol-Version': header });
      expect({ header, status: res.status }).toEqual({ header, status: 200 });
      expect(res.body.result.protocolVersion).toBe('2025-03-26');
      expect(res.headers['mcp-session-id']).toMatch(/^[A-Za-z0-9_-]{32}$/);
    }
    // An unknown revision in the body gets the one the server prefers, as before.
    const unknown = await initialize('1999-01-01', { 'MCP-Protocol-Version': '1999-01-01' });
    expect(unknown.body.result.protocolVersion).toBe('2025-06-18');
  });

  it('treats an empty or blank MCP-Protocol-Version as absent', async () => {
    for (const header of ['', '   ']) {
      const res = await post(
        { jsonrpc: '2.0', id: 3, method: 'ping' },
        {
          'MCP-Protocol-Version': header,
        },
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    }
    // Anything else unsupported is still refused, echoing the id.
    const bad = await post(
      { jsonrpc: '2.0', id: 4, method: 'ping' },
      { 'MCP-Protocol-Version': '1999-01-01' },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.id).toBe(4);
    expect(bad.body.error.code).toBe(-32600);
  });

  it('never loses a cancel: notifications/cancelled aborts the call whatever its header', async () => {
    const init = await initialize('2025-06-18');
    const session = init.headers['mcp-session-id'] as string;
    const sessionHeaders = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };
    for (const [i, header] of ['1999-01-01', 'not-a-version'].entries()) {
      const before = aborted.length;
      const id = `wait-${i}`;
      const pending = post(
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'edge_wait', arguments: {} } },
        sessionHeaders,
      ).then((res) => res);
      await eventually(() => expect(started).toBe(i + 1));
      const cancel = await post(
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } },
        { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': header },
      );
      expect(cancel.status).toBe(202);
      await eventually(() => expect(aborted.length).toBe(before + 1));
      expect(aborted[before]).toMatch(/notifications_cancelled/);
      await pending;
    }
  });

  it('ending a session (DELETE) aborts its calls in flight, and only its own', async () => {
    const open = async () =>
      (await initialize('2025-06-18')).headers['mcp-session-id'] as unknown as string;
    const [ending, staying] = [await open(), await open()];
    const before = { started, aborted: aborted.length };
    const callIn = (session: string, id: string) =>
      post(
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'edge_wait', arguments: {} } },
        { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' },
      ).then((res) => res);
    const endingCall = callIn(ending, 'in-ending');
    const stayingCall = callIn(staying, 'in-staying');
    await eventually(() => expect(started).toBe(before.started + 2));

    const deleted = await request(t.app.getHttpServer())
      .delete('/mcp')
      .set('Mcp-Session-Id', ending);
    expect(deleted.status).toBe(204);
    await eventually(() => expect(aborted.length).toBe(before.aborted + 1));
    expect(aborted[before.aborted]).toMatch(/session_ended/);
    const answer = await endingCall;
    expect(answer.body.id).toBe('in-ending');
    // The other session's call still runs: only a cancel of its own stops it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(aborted.length).toBe(before.aborted + 1);
    await post(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'in-staying' } },
      { 'Mcp-Session-Id': staying },
    );
    await stayingCall;
    expect(aborted.slice(before.aborted)).toEqual([
      expect.stringMatching(/session_ended/),
      expect.stringMatching(/notifications_cancelled/),
    ]);
  });

  it.each(['notifications/initialized', 'notifications/cancelled', 'notifications/progress'])(
    'refuses %s sent with an id: -32600, echoing the id',
    async (method) => {
      const res = await post({ jsonrpc: '2.0', id: 'n-1', method, params: { requestId: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        id: 'n-1',
        error: {
          code: -32600,
          message: `Invalid Request: ${method} is a notification: send it without an id`,
        },
      });
      // Without an id it is accepted as before.
      const ok = await post({ jsonrpc: '2.0', method, params: { requestId: 'x' } });
      expect(ok.status).toBe(202);
    },
  );
});
