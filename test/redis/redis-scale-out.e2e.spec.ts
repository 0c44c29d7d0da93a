import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PolicedToolContext } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { randomBytes } from 'node:crypto';
import { eventually, openSsePost } from '../mcp/mcp-test-app';
import { createObject } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';
import {
  callBody,
  initializeBody,
  redisReachable,
  redisServerInstalled,
  rpc,
  runKeyPrefix,
  SHARED_REDIS_URL,
  startHoldingParseProxy,
  startOwnRedis,
  startRedisNode,
  startRoundRobinProxy,
  type HoldingParseProxy,
  type OwnRedis,
  type RedisNode,
} from './redis-nodes';

// The shared service when it runs; else a redis-server of our own; else the suite is skipped.
const sharedUp = redisReachable(SHARED_REDIS_URL);
const available = sharedUp || redisServerInstalled();
if (!available) {
  // Visible in the run's output: the suite is skipped, not passed.
  console.warn(
    `SKIPPED redis scale-out suite: no Redis at ${SHARED_REDIS_URL} and no redis-server on PATH (set TEST_REDIS_URL or install redis-server).`,
  );
}
const describeWithRedis = available ? describe : describe.skip;

/** Why each call of `redis_wait` ended, by the node it ran on ('a' or 'b'). */
const waitEnds: Array<{ node: string; reason: unknown }> = [];

/** Registers the same application tools on a node (each node serves its own registry). */
function addTools(node: RedisNode, label: string): void {
  node.tools.register({
    name: 'redis_wait',
    description: 'Runs until its signal aborts (or 10 s pass).',
    clientSafe: true,
    handler: (_args, ctx: PolicedToolContext) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ finished: true }), 10_000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          waitEnds.push({ node: label, reason: ctx.signal.reason });
          resolve({ finished: false });
        });
      }),
  });
  node.tools.register({
    name: 'redis_echo',
    description: 'Answers at once (no Parse request).',
    clientSafe: true,
    handler: () => ({ ok: true }),
  });
  node.tools.register({
    name: 'redis_held_count',
    description: 'Counts RedisHeld rows through Parse (the test proxy holds that request).',
    clientSafe: true,
    handler: async (_args, ctx: PolicedToolContext) => ({
      count: await ctx.read.count('RedisHeld', {}),
    }),
  });
}

const token = (label: string) => `r:${label}:${randomBytes(6).toString('hex')}`;
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });

function toolText(json: Record<string, unknown> | undefined): Record<string, unknown> {
  const result = json?.result as { content: Array<{ text: string }> };
  return JSON.parse(unwrapUntrusted(result.content[0].text)) as Record<string, unknown>;
}

describeWithRedis('two nodes sharing Redis behave as one', () => {
  let a: RedisNode;
  let b: RedisNode;
  let parseProxy: HoldingParseProxy;
  let ownRedis: OwnRedis | undefined;

  beforeAll(async () => {
    const keyPrefix = runKeyPrefix('scale-out');
    if (!sharedUp) ownRedis = await startOwnRedis();
    const redisUrl = ownRedis?.url ?? SHARED_REDIS_URL;
    // The tools count through the agent's policed reader, whose class gate wants the class to exist.
    await createObject('RedisHeld', { n: 1 });
    parseProxy = await startHoldingParseProxy(
      testParseConnection().serverURL,
      '/classes/RedisHeld',
    );
    a = await startRedisNode({
      redisUrl,
      keyPrefix,
      parse: { ...testParseConnection(), serverURL: parseProxy.serverURL },
    });
    b = await startRedisNode({ redisUrl, keyPrefix });
    addTools(a, 'a');
    addTools(b, 'b');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await parseProxy?.close();
    await ownRedis?.stop();
  });

  async function openSession(node: RedisNode, who: string): Promise<string> {
    const init = await rpc(node.url, initializeBody(), bearer(who));
    expect(init.status).toBe(200);
    const id = init.headers.get('mcp-session-id');
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    return id!;
  }

  it('shares one rate limit per principal: the 61st call on either node is refused', async () => {
    const alice = token('alice');
    for (let i = 0; i < 60; i++) {
      const node = i % 2 ? b : a;
      const res = await rpc(node.url, callBody(i, 'redis_echo'), bearer(alice));
      expect(toolText(res.json)).toEqual({ ok: true });
    }
    for (const node of [a, b]) {
      const res = await rpc(node.url, callBody(99, 'redis_echo'), bearer(alice));
      const result = res.json?.result as { isError: boolean; _meta: Record<string, unknown> };
      expect(result.isError).toBe(true);
      expect(result._meta['parse.error_code']).toBe('rate_limited');
      expect(result._meta['parse.retry_after']).toBeGreaterThan(0);
      expect(JSON.stringify(res.json)).toMatch(/Rate limit exceeded \(60 requests per 60s\)/);
    }
    // Another principal has its own window: not limited by alice's calls.
    const bob = await rpc(b.url, callBody(1, 'redis_echo'), bearer(token('bob')));
    expect(toolText(bob.json)).toEqual({ ok: true });
  });

  it('charges a tool call of a session once (its charge goes out with the session check): the 60th request of the minute is the last served', async () => {
    const dave = token('dave');
    const session = { ...bearer(dave), 'Mcp-Session-Id': await openSession(a, dave) };
    // initialize counted as the first of the principal's 60 requests; 59 tool calls follow.
    for (let i = 0; i < 59; i++) {
      const res = await rpc((i % 2 ? b : a).url, callBody(i, 'redis_echo'), session);
      expect([i, toolText(res.json)]).toEqual([i, { ok: true }]);
    }
    const refused = await rpc(b.url, callBody(99, 'redis_echo'), session);
    expect(JSON.stringify(refused.json)).toMatch(/Rate limit exceeded \(60 requests per 60s\)/);
    expect(JSON.stringify(refused.json)).not.toMatch(/"ok"/);
    // A call naming a session that does not exist is 404, and counted like any other request.
    const erin = token('erin');
    const unknown = { ...bearer(erin), 'Mcp-Session-Id': 'x'.repeat(32) };
    expect((await rpc(a.url, callBody(1, 'redis_echo'), unknown)).status).toBe(404);
    for (let i = 0; i < 59; i++) {
      const res = await rpc((i % 2 ? b : a).url, callBody(i, 'redis_echo'), bearer(erin));
      expect([i, toolText(res.json)]).toEqual([i, { ok: true }]);
    }
    const last = await rpc(a.url, callBody(60, 'redis_echo'), bearer(erin));
    expect(JSON.stringify(last.json)).toMatch(/Rate limit exceeded/);
  }, 30_000);

  it('serves a session created on A from B, only to its owner, and DELETE on B ends it on A', async () => {
    const carol = token('carol');
    const session = await openSession(a, carol);
    const listed = await rpc(
      b.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { ...bearer(carol), 'Mcp-Session-Id': session },
    );
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.json)).toContain('redis_echo');

    // Another principal cannot use the id on either node.
    for (const node of [a, b]) {
      const stolen = await rpc(
        node.url,
        { jsonrpc: '2.0', id: 3, method: 'tools/list' },
        { ...bearer(token('mallory')), 'Mcp-Session-Id': session },
      );
      expect(stolen.status).toBe(404);
    }

    // A GET stream on A closes when B ends the session.
    const stream = await openSsePost(
      a.url,
      undefined,
      { ...bearer(carol), 'Mcp-Session-Id': session },
      'GET',
    );
    expect(stream.status).toBe(200);
    const closed = stream.rest();
    const deleted = await fetch(b.url, {
      method: 'DELETE',
      headers: { ...bearer(carol), 'Mcp-Session-Id': session },
    });
    expect(deleted.status).toBe(204);
    await expect(closed).resolves.toBeDefined(); // the stream ended
    const after = await rpc(
      a.url,
      { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      { ...bearer(carol), 'Mcp-Session-Id': session },
    );
    expect(after.status).toBe(404);
  });

  it('a cancel sent to B aborts the call running on A, and its Parse request', async () => {
    const dave = token('dave');
    const session = await openSession(b, dave);
    const headers = { ...bearer(dave), 'Mcp-Session-Id': session };
    const heldBefore = parseProxy.held;
    const abortedBefore = parseProxy.aborted;
    const running = rpc(a.url, callBody(7, 'redis_held_count'), headers);
    await eventually(() => expect(parseProxy.held).toBe(heldBefore + 1));

    // Another principal's cancel for the same request id reaches nothing.
    const wrongPrincipal = await rpc(
      b.url,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } },
      { ...bearer(token('eve')), 'Mcp-Session-Id': session },
    );
    expect(wrongPrincipal.status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(parseProxy.aborted).toBe(abortedBefore);

    const cancel = await rpc(
      b.url,
      {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 7, reason: 'user' },
      },
      headers,
    );
    expect(cancel.status).toBe(202);
    await eventually(() => expect(parseProxy.aborted).toBe(abortedBefore + 1));
    const answered = await running;
    const result = answered.json?.result as { isError?: boolean } | undefined;
    // The call ended early: never a count.
    expect(JSON.stringify(answered.json ?? {})).not.toMatch(/"count"/);
    if (result) expect(result.isError).toBe(true);
  });

  it('DELETE on B aborts the session’s calls running on A (their Parse requests too), and only those', async () => {
    const frank = token('frank');
    const ending = { ...bearer(frank), 'Mcp-Session-Id': await openSession(b, frank) };
    const staying = { ...bearer(frank), 'Mcp-Session-Id': await openSession(b, frank) };
    const heldBefore = parseProxy.held;
    const abortedBefore = parseProxy.aborted;
    const endsBefore = waitEnds.length;
    const held = rpc(a.url, callBody(11, 'redis_held_count'), ending);
    const waiting = rpc(a.url, callBody(12, 'redis_wait'), ending);
    const other = rpc(a.url, callBody(13, 'redis_wait'), staying);
    await eventually(() => expect(parseProxy.held).toBe(heldBefore + 1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(waitEnds.length).toBe(endsBefore);

    const deleted = await fetch(b.url, { method: 'DELETE', headers: ending });
    expect(deleted.status).toBe(204);
    await eventually(() => expect(parseProxy.aborted).toBe(abortedBefore + 1));
    await eventually(() => expect(waitEnds.length).toBe(endsBefore + 1));
    expect(waitEnds[endsBefore]).toEqual({ node: 'a', reason: 'session_ended' });
    // The ended session's calls answer early: never a count.
    expect(JSON.stringify((await held).json ?? {})).not.toMatch(/"count"/);
    await waiting;
    // The caller's other session keeps its call running.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(waitEnds.length).toBe(endsBefore + 1);
    await rpc(
      b.url,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 13 } },
      staying,
    );
    await other;
    expect(waitEnds.slice(endsBefore).map((end) => end.reason)).toEqual([
      'session_ended',
      'notifications_cancelled',
    ]);
  });

  it('a tool registered on A reaches a listChanged stream open on B', async () => {
    const erin = token('erin');
    const session = await openSession(b, erin);
    const stream = await openSsePost(
      b.url,
      undefined,
      { ...bearer(erin), 'Mcp-Session-Id': session },
      'GET',
    );
    expect(stream.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    a.tools.register({
      name: 'redis_late',
      description: 'Registered on A while B streams.',
      handler: () => ({}),
    });
    let seen: string | undefined;
    for (let event = await stream.next(); event; event = await stream.next()) {
      if (event.data?.includes('list_changed')) {
        seen = event.data;
        break;
      }
    }
    stream.abort();
    expect(JSON.parse(seen!)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
    });
    a.tools.unregister('redis_late');
  });

  it('the official SDK client works through a round-robin proxy over both nodes', async () => {
    const proxy = await startRoundRobinProxy([a.url, b.url]);
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url), {
      requestInit: { headers: bearer(token('frank')) },
    });
    const client = new Client({ name: 'redis-round-robin', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
      for (let i = 0; i < 4; i++) {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain('redis_echo');
        const result = await client.callTool({ name: 'redis_echo', arguments: {} });
        expect(result.isError).toBeFalsy();
      }
      expect(proxy.served[0]).toBeGreaterThan(2);
      expect(proxy.served[1]).toBeGreaterThan(2);
    } finally {
      await client.close().catch(() => undefined);
      await proxy.close();
    }
  });
});
