import { Agent, request } from 'node:http';
import { startMcpTestApp, openSsePost, delay, type McpTestApp } from './mcp-test-app';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

/** A tool that waits `ms` (or until its signal aborts), recording how it ended. */
function registerWaitTool(t: McpTestApp, outcomes: string[]): void {
  t.tools.register({
    name: 'shutdown_wait',
    description: 'Waits, for the shutdown tests.',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } },
    timeout: 120,
    handler: (args: { ms?: number }, { signal }) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          outcomes.push('finished');
          resolve({ waited: args.ms });
        }, args.ms ?? 60_000);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          outcomes.push(`aborted:${String(signal.reason)}`);
          resolve({ aborted: true });
        });
      }),
  });
}

const waitCall = (id: number, ms: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'shutdown_wait', arguments: { ms } },
});

/** One POST on the given keep-alive agent: the status and body, or the socket error's code. */
function post(
  agent: Agent,
  url: string,
  body: unknown,
): Promise<{ status?: number; body?: string; error?: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
        res.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ error: error.code ?? 'error' }),
        );
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? 'error' }));
    req.end(payload);
  });
}

describe('MCP endpoint: graceful shutdown', () => {
  it('answers a call sent on a kept-alive connection as shutdown begins, instead of closing the connection under it', async () => {
    const t = await startMcpTestApp({ mcp: { shutdownGracePeriodMs: 3000 } });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    expect((await post(agent, t.url, ping(1))).status).toBe(200);
    // Nothing is in flight, so the drain itself has nothing to wait for; the next call goes out
    // on the same socket while the app is closing.
    const closed = t.close();
    const late = await post(agent, t.url, ping(2));
    await closed;
    agent.destroy();
    expect(late.error).toBeUndefined();
    expect(late.status).toBe(503);
    expect(JSON.parse(late.body!)).toMatchObject({
      jsonrpc: '2.0',
      id: 2,
      error: { code: expect.any(Number) },
    });
  });

  it('lets calls that finish within the grace period answer normally', async () => {
    const outcomes: string[] = [];
    const t = await startMcpTestApp({ mcp: { shutdownGracePeriodMs: 3000 } });
    registerWaitTool(t, outcomes);
    const pending = fetch(t.url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(waitCall(1, 400)),
    });
    await delay(100);
    const closed = t.close();
    const res = await pending;
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: number; result: { isError: boolean } };
    expect(body.id).toBe(1);
    expect(body.result.isError).toBe(false);
    await closed;
    expect(outcomes).toEqual(['finished']);
  });

  it('after the grace period cancels the calls in flight and answers each (JSON and SSE) with a JSON-RPC error', async () => {
    const outcomes: string[] = [];
    const t = await startMcpTestApp({ mcp: { shutdownGracePeriodMs: 300 } });
    registerWaitTool(t, outcomes);
    const json = fetch(t.url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(waitCall(1, 60_000)),
    });
    const sse = await openSsePost(t.url, {
      ...waitCall(2, 60_000),
      params: {
        ...waitCall(2, 0).params,
        arguments: { ms: 60_000 },
        _meta: { progressToken: 'p' },
      },
    });
    expect(sse.status).toBe(200);
    await delay(150);

    const started = Date.now();
    const closed = t.close();
    // While draining, new calls are refused rather than started.
    await delay(50);
    const late = await fetch(t.url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(waitCall(3, 10)),
    }).catch(() => undefined);
    if (late) {
      expect(late.status).toBe(503);
      expect(((await late.json()) as { id: number }).id).toBe(3);
    }

    const res = await json;
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32000,
        message: 'Server shutting down: the call was not completed; retry it shortly.',
      },
    });
    const events = await sse.rest();
    const last = JSON.parse(events.filter((e) => e.data).at(-1)!.data!) as Record<string, unknown>;
    expect(last).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: {
        code: -32000,
        message: 'Server shutting down: the call was not completed; retry it shortly.',
      },
    });
    await closed;
    expect(Date.now() - started).toBeLessThan(3000);
    // Both tools were cancelled through their signal; none ran to the end, the late call never ran.
    expect(outcomes.sort()).toEqual(['aborted:server_shutdown', 'aborted:server_shutdown']);
  });

  it('closes the standalone GET stream with a final message', async () => {
    const t = await startMcpTestApp({ mcp: { shutdownGracePeriodMs: 100 } });
    const stream = await openSsePost(t.url, undefined, { Accept: 'text/event-stream' }, 'GET');
    expect(stream.status).toBe(200);
    await t.close();
    const events = await stream.rest();
    expect(events.at(-1)).toEqual({ comment: 'server shutting down' });
  });
});

/** One POST on a fresh connection whose body arrives in two halves `pauseMs` apart. */
function slowPost(
  url: string,
  body: unknown,
  pauseMs: number,
): Promise<{ status?: number; body?: string; error?: string; sentAt: number }> {
  const payload = Buffer.from(JSON.stringify(body));
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { ...JSON_HEADERS, 'Content-Length': payload.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: text, sentAt }));
        res.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ error: error.code ?? 'error', sentAt }),
        );
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code ?? 'error', sentAt }),
    );
    const half = payload.length >> 1;
    req.write(payload.subarray(0, half));
    setTimeout(() => req.end(payload.subarray(half)), pauseMs);
  });
}

describe('MCP endpoint: shutdown under a steady stream of requests', () => {
  /** 'ok', '503' (with the JSON-RPC error), 'refused' (listener closed) or 'reset:<code>'. */
  function outcome(r: { status?: number; body?: string; error?: string }): string {
    if (r.error) return r.error === 'ECONNREFUSED' ? 'refused' : `reset:${r.error}`;
    if (r.status === 503) {
      const body = JSON.parse(r.body!) as { error?: { code?: number } };
      return body.error?.code === -32000 ? '503' : 'bad503';
    }
    return r.status === 200 ? 'ok' : `status:${r.status}`;
  }

  it('answers every request that arrives while the node shuts down (200, or 503 with a JSON-RPC error), not a reset connection', async () => {
    const outcomes: string[] = [];
    const t = await startMcpTestApp({ mcp: { shutdownGracePeriodMs: 600 } });
    registerWaitTool(t, outcomes);
    const counts = new Map<string, number>();
    const resets: number[] = [];
    let stopped = false;
    let listenerClosedAt = Infinity;
    const deadline = Date.now() + 8000;
    // Eight clients on kept-alive sockets, eight opening a fresh connection per request.
    const worker = async (fresh: boolean, n: number) => {
      const agent = new Agent({ keepAlive: !fresh, maxSockets: 1 });
      for (let i = 0; Date.now() < deadline && !stopped; i++) {
        const id = n * 10_000 + i;
        const body = i % 4 === 0 ? waitCall(id, 50) : { jsonrpc: '2.0', id, method: 'ping' };
        const result = outcome(await post(agent, t.url, body));
        counts.set(result, (counts.get(result) ?? 0) + 1);
        if (result.startsWith('reset')) resets.push(Date.now());
        if (result === 'refused') {
          listenerClosedAt = Math.min(listenerClosedAt, Date.now());
          stopped = true;
        }
      }
      agent.destroy();
    };
    // Four clients whose request takes 150 ms to arrive: one is always being read when the
    // listener closes; each must get its answer, not a connection destroyed under it.
    const slowResets: number[] = [];
    const slowWorker = async (n: number) => {
      for (let i = 0; Date.now() < deadline && !stopped; i++) {
        const r = await slowPost(
          t.url,
          { jsonrpc: '2.0', id: 900_000 + n * 1000 + i, method: 'ping' },
          150,
        );
        const result = outcome(r);
        counts.set(result, (counts.get(result) ?? 0) + 1);
        if (result.startsWith('reset')) slowResets.push(r.sentAt);
        if (result === 'refused') stopped = true;
      }
    };
    const workers = [
      ...Array.from({ length: 16 }, (_, n) => worker(n % 2 === 0, n)),
      ...Array.from({ length: 4 }, (_, n) => slowWorker(n)),
    ];
    await delay(300);
    await t.close();
    await Promise.all(workers);
    const summary = Object.fromEntries(counts);
    expect(summary.ok).toBeGreaterThan(0);
    // Late calls wait for their 503 until the listener closes, so clients do not spin: fewer 503s.
    expect(summary['503']).toBeGreaterThan(0);
    expect(summary.refused).toBeGreaterThan(0);
    expect(
      Object.keys(summary).filter(
        (k) => !['ok', '503', 'refused'].includes(k) && !k.startsWith('reset:'),
      ),
    ).toEqual([]);
    // A reset can only be a connection still in the kernel's accept queue when the listener closed.
    // Late calls are held until then (a waiting client opens no new connection), so none are left
    // (14 of 16 clients were reset before holding; 2 allowed for a stalled event loop, since
    // clients and server share this process's), never a connection the server had taken.
    expect(resets.length).toBeLessThanOrEqual(2);
    // A request the server had been reading for a while is answered.
    expect(slowResets.filter((sentAt) => sentAt < listenerClosedAt - 30)).toEqual([]);
    for (const at of resets) expect(Math.abs(at - listenerClosedAt)).toBeLessThan(50);
  }, 20_000);
});
