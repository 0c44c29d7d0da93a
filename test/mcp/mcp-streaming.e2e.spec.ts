import request from 'supertest';
import type { PolicedToolContext } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import {
  delay,
  eventually,
  messagesOf,
  openSsePost,
  parseSse,
  sseMessages,
  startMcpTestApp,
  type McpTestApp,
} from './mcp-test-app';

const SSE_ACCEPT = 'application/json, text/event-stream';

/** Records what the slow tools saw, so tests can assert on the server side. */
interface ToolProbe {
  started: number;
  aborted: unknown[];
}

function registerTestTools(t: McpTestApp, probe: ToolProbe): void {
  t.tools.register({
    name: 'http_slow',
    description: 'Waits, then reports two steps of progress.',
    inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
    handler: async (args: { ms?: number }, ctx: PolicedToolContext) => {
      await delay(args.ms ?? 200);
      ctx.reportProgress({ progress: 1, total: 2, message: 'half way' });
      await delay(30);
      ctx.reportProgress({ progress: 2, total: 2 });
      return { done: true };
    },
  });
  t.tools.register({
    name: 'http_wait',
    description: 'Runs until its signal aborts (or 10 s pass).',
    handler: (_args, ctx: PolicedToolContext) =>
      new Promise((resolve) => {
        probe.started++;
        const timer = setTimeout(() => resolve({ finished: true }), 10_000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          probe.aborted.push(ctx.signal.reason);
          resolve({ finished: false });
        });
      }),
  });
}

const call = (id: number | string, name: string, args: object = {}, meta?: object) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

describe('MCP endpoint: SSE streaming, heartbeats, cancellation, list changes', () => {
  let t: McpTestApp;
  const probe: ToolProbe = { started: 0, aborted: [] };

  beforeAll(async () => {
    t = await startMcpTestApp({ mcp: { heartbeatIntervalMs: 50 } });
    registerTestTools(t, probe);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    probe.started = 0;
    probe.aborted = [];
  });

  it('streams heartbeats with the client token, then tool progress, then the response', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', SSE_ACCEPT)
      .send(call(1, 'http_slow', { ms: 220 }, { progressToken: 'tok-1' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-accel-buffering']).toBe('no');
    const events = parseSse(res.text);
    expect(events.every((e) => e.event === 'message')).toBe(true);
    const messages = sseMessages(res.text);
    const response = messages.pop()!;
    expect(response).toMatchObject({ jsonrpc: '2.0', id: 1, result: { isError: false } });
    expect(JSON.parse(unwrapUntrusted(response.result!.content![0].text))).toEqual({ done: true });

    const progress = messages.map((m) => m.params!);
    expect(messages.every((m) => m.method === 'notifications/progress')).toBe(true);
    expect(progress.every((p) => p.progressToken === 'tok-1')).toBe(true);
    const firstTool = progress.findIndex((p) => p.total !== undefined);
    const heartbeats = progress.slice(0, firstTool);
    expect(heartbeats.length).toBeGreaterThanOrEqual(2);
    for (const h of heartbeats)
      expect(Object.keys(h).sort()).toEqual(['progress', 'progressToken']);
    expect(heartbeats[0].progress).toBeGreaterThan(0);
    expect(heartbeats[0].progress).toBeLessThan(1);
    // Heartbeats stop once the tool reports its own progress.
    expect(progress.slice(firstTool)).toEqual([
      { progressToken: 'tok-1', progress: 1, total: 2, message: 'half way' },
      { progressToken: 'tok-1', progress: 2, total: 2 },
    ]);
  });

  it('sends keep-alive comments instead of progress when the client gave no token', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', SSE_ACCEPT)
      .send(call('no-token', 'http_slow', { ms: 160 }));
    const events = parseSse(res.text);
    expect(events.filter((e) => e.comment === 'keep-alive').length).toBeGreaterThanOrEqual(2);
    const messages = sseMessages(res.text);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ id: 'no-token', result: { isError: false } });
  });

  it('answers a streamed call that finishes quickly with just the response', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', SSE_ACCEPT)
      .send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_tools' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(res.text);
    expect(events).toHaveLength(1);
    expect(sseMessages(res.text)).toEqual([
      expect.objectContaining({ id: 3, result: expect.objectContaining({ isError: false }) }),
    ]);
  });

  it('answers methods that run no tool as plain JSON even when SSE is accepted', async () => {
    for (const method of ['ping', 'tools/list', 'prompts/list']) {
      const res = await request(t.app.getHttpServer())
        .post('/mcp')
        .set('Content-Type', 'application/json')
        .set('Accept', SSE_ACCEPT)
        .send({ jsonrpc: '2.0', id: 9, method });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 9 });
      expect(res.body.result).toBeDefined();
    }
  });

  it('answers a notification sent with an SSE Accept with 202, not a stream', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', SSE_ACCEPT)
      .send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
  });

  it('cancels an in-flight streamed call on notifications/cancelled with the same correlation id', async () => {
    const stream = await openSsePost(t.url, call(41, 'http_wait'), {
      'X-MCP-Session-Id': 'conversation-1',
    });
    expect(stream.status).toBe(200);
    await eventually(() => expect(probe.started).toBe(1));

    // Another conversation cannot cancel it; the answer is 202 either way.
    const wrong = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('X-MCP-Session-Id', 'conversation-2')
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 41 } });
    expect(wrong.status).toBe(202);
    expect(wrong.text).toBe('');
    const wrongType = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('X-MCP-Session-Id', 'conversation-1')
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: '41' } });
    expect(wrongType.status).toBe(202);
    await delay(100);
    expect(probe.aborted).toEqual([]);

    const cancel = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('X-MCP-Session-Id', 'conversation-1')
      .send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 41, reason: 'user pressed stop' },
      });
    expect(cancel.status).toBe(202);
    expect(cancel.text).toBe('');

    const response = messagesOf(await stream.rest()).pop()!;
    expect(response.id).toBe(41);
    expect(response.result).toEqual({
      content: [{ type: 'text', text: 'Cancelled by client (notifications_cancelled)' }],
      isError: true,
      cancelled: true,
    });
    expect(probe.aborted).toEqual(['notifications_cancelled']);
  });

  it('uses the Mcp-Session-Id as the correlation key when X-MCP-Session-Id is absent', async () => {
    const init = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} });
    const session = init.headers['mcp-session-id'] as string;
    const stream = await openSsePost(t.url, call(42, 'http_wait'), { 'Mcp-Session-Id': session });
    await eventually(() => expect(probe.started).toBe(1));
    const cancel = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Mcp-Session-Id', session)
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 42 } });
    expect(cancel.status).toBe(202);
    const response = messagesOf(await stream.rest()).pop()!;
    expect(response.result!.cancelled).toBe(true);
    expect(probe.aborted).toEqual(['notifications_cancelled']);
  });

  it('cancels a JSON-path call too', async () => {
    const pending = request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json')
      .set('X-MCP-Session-Id', 'json-path')
      .send(call('j1', 'http_wait'))
      .then((r) => r);
    await eventually(() => expect(probe.started).toBe(1));
    await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('X-MCP-Session-Id', 'json-path')
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'j1' } });
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({ isError: true, cancelled: true });
    expect(probe.aborted).toEqual(['notifications_cancelled']);
  });

  it('aborts the tool when the client disconnects', async () => {
    const stream = await openSsePost(t.url, call(43, 'http_wait', {}, { progressToken: 'p' }));
    const first = await stream.next();
    expect(first?.event).toBe('message');
    expect(probe.started).toBe(1);
    stream.abort();
    await eventually(() => expect(probe.aborted).toEqual(['client_disconnect']));
    // The endpoint keeps serving.
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(res.status).toBe(200);
  });

  it('pushes list_changed on the GET stream and on in-flight POST streams', async () => {
    const noAccept = await request(t.app.getHttpServer())
      .get('/mcp')
      .set('Accept', 'application/json');
    expect(noAccept.status).toBe(406);

    const get = await openSsePost(t.url, undefined, { Accept: 'text/event-stream' }, 'GET');
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('text/event-stream');
    const post = await openSsePost(t.url, call(44, 'http_wait'));
    await eventually(() => expect(probe.started).toBe(1));

    t.tools.register({
      name: 'http_added_later',
      description: 'Registered while clients are connected.',
      handler: () => ({ ok: true }),
    });
    t.prompts.register({
      name: 'http_prompt',
      description: 'A prompt added at runtime.',
      render: () => 'Say hello.',
    });

    const seen: string[] = [];
    while (seen.length < 2) {
      const e = await get.next();
      if (e?.data) seen.push(JSON.parse(e.data).method);
    }
    expect(seen).toEqual([
      'notifications/tools/list_changed',
      'notifications/prompts/list_changed',
    ]);
    const onPost: string[] = [];
    while (onPost.length < 2) {
      const e = await post.next();
      if (e?.data) onPost.push(JSON.parse(e.data).method);
    }
    expect(onPost).toEqual(seen);
    get.abort();
    post.abort();
    await eventually(() => expect(probe.aborted).toEqual(['client_disconnect']));
  });

  it('closes the GET stream of a session that is deleted', async () => {
    const init = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} });
    const session = init.headers['mcp-session-id'] as string;
    const get = await openSsePost(
      t.url,
      undefined,
      { Accept: 'text/event-stream', 'Mcp-Session-Id': session },
      'GET',
    );
    expect(get.status).toBe(200);
    const del = await request(t.app.getHttpServer()).delete('/mcp').set('Mcp-Session-Id', session);
    expect(del.status).toBe(204);
    const rest = await get.rest();
    expect(rest.filter((e) => e.data)).toEqual([]);
    const unknown = await request(t.app.getHttpServer())
      .get('/mcp')
      .set('Accept', 'text/event-stream')
      .set('Mcp-Session-Id', session);
    expect(unknown.status).toBe(404);
  });
});

describe('MCP endpoint: maxConcurrentStreams', () => {
  let t: McpTestApp;
  const probe: ToolProbe = { started: 0, aborted: [] };
  beforeAll(async () => {
    t = await startMcpTestApp({ mcp: { maxConcurrentStreams: 1, heartbeatIntervalMs: 1000 } });
    registerTestTools(t, probe);
  });
  afterAll(() => t.close());

  it('answers 503 server busy above the cap, with the request id, and serves JSON meanwhile', async () => {
    const first = await openSsePost(t.url, call(1, 'http_wait'), { 'X-MCP-Session-Id': 'busy' });
    await eventually(() => expect(probe.started).toBe(1));
    const second = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', SSE_ACCEPT)
      .send(call(2, 'http_wait'));
    expect(second.status).toBe(503);
    expect(second.headers['content-type']).toMatch(/^application\/json/);
    expect(second.text).toBe(
      JSON.stringify({ jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'server busy' } }),
    );
    const json = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(json.status).toBe(200);

    first.abort();
    await eventually(() => expect(probe.aborted).toHaveLength(1));
    const third = await request(t.app.getHttpServer())
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', SSE_ACCEPT)
      .send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'list_tools' } });
    expect(third.status).toBe(200);
    expect(sseMessages(third.text)).toEqual([
      expect.objectContaining({
        jsonrpc: '2.0',
        id: 4,
        result: expect.objectContaining({ isError: false }),
      }),
    ]);
  });
});
