import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { PolicedToolContext } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { randomBytes } from 'node:crypto';
import { createObject } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';
import { delay, eventually, messagesOf, openSsePost, progressOf } from '../mcp/mcp-test-app';
import {
  redisClusterToolsInstalled,
  startLocalRedisCluster,
  type LocalRedisCluster,
} from './redis-cluster';
import {
  callBody,
  initializeBody,
  killMidStreamAndResume,
  rpc,
  runKeyPrefix,
  startHoldingParseProxy,
  startRedisNode,
  startNodeProcess,
  startRoundRobinProxy,
  type HoldingParseProxy,
  type NodeProcess,
  type RedisNode,
  type RoundRobinProxy,
  registerSteppingTool,
  STEP_MS,
  STEPS,
} from './redis-nodes';

const installed = redisClusterToolsInstalled();
if (!installed) {
  // Visible in the run's output: the suite is skipped, not passed.
  console.warn(
    'SKIPPED redis cluster suite: needs redis-server and redis-cli 7 or later on PATH (apt-get install redis-server).',
  );
}
const describeWithCluster = installed ? describe : describe.skip;

interface Runs {
  started: number;
  aborted: number;
}

/** The same tools on every node (each node serves its own registry). */
function addTools(node: RedisNode, runs: Runs): void {
  node.tools.register({
    name: 'cluster_echo',
    description: 'Answers at once (no Parse request).',
    clientSafe: true,
    handler: () => ({ ok: true }),
  });
  node.tools.register({
    name: 'cluster_held_count',
    description: 'Counts ClusterHeld rows through Parse (the test proxy holds that request).',
    clientSafe: true,
    handler: async (_args, ctx: PolicedToolContext) => ({
      count: await ctx.read.count('ClusterHeld', {}),
    }),
  });
  node.tools.register({
    name: 'cluster_confirm',
    description: 'Asks the person to confirm, then says what they answered.',
    clientSafe: true,
    handler: async (_args, ctx: PolicedToolContext) => {
      const outcome = await ctx.confirm({
        message: 'Allow cluster_confirm?',
        tool: 'cluster_confirm',
        className: 'Thing',
      });
      return { confirmed: outcome.confirmed };
    },
  });
  registerSteppingTool(node, 'cluster_steps', runs);
}

const token = (label: string) => `r:${label}:${randomBytes(6).toString('hex')}`;
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const protocol = { 'MCP-Protocol-Version': '2025-11-25' };

/**
 * Waits until the SDK client's connect has sent all of its requests through the proxy: initialize,
 * notifications/initialized and the GET stream it opens after them. From then on, each request of
 * the test goes to the node after the one before (strict round robin).
 */
async function connectSettled(proxy: RoundRobinProxy): Promise<void> {
  await eventually(() => expect(proxy.served.reduce((sum, n) => sum + n, 0)).toBe(3));
}

function sdkClient(url: string, who: string, name: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: bearer(who) },
    reconnectionOptions: {
      initialReconnectionDelay: 50,
      maxReconnectionDelay: 200,
      reconnectionDelayGrowFactor: 1,
      maxRetries: 3,
    },
  });
  return { transport, client: new Client({ name, version: '1.0.0' }) };
}

/** Every key under `prefix` on every master, with the slot CLUSTER KEYSLOT gives it. */
function keysWithSlots(cluster: LocalRedisCluster, prefix: string): Map<string, number> {
  const keys = new Map<string, number>();
  for (const node of cluster.nodes) {
    const found = cluster.cliOn(node.port, '--scan', '--pattern', `${prefix}*`);
    for (const key of found.split('\n').filter(Boolean)) {
      keys.set(key, Number(cluster.cli('CLUSTER', 'KEYSLOT', key)));
    }
  }
  return keys;
}

describeWithCluster('two nodes sharing a Redis Cluster of three masters', () => {
  let cluster: LocalRedisCluster;
  let a: RedisNode;
  let b: RedisNode;
  let parseProxy: HoldingParseProxy;
  const keyPrefix = runKeyPrefix('cluster');
  const runs: Runs = { started: 0, aborted: 0 };

  beforeAll(async () => {
    cluster = await startLocalRedisCluster(3);
    // The tools count through the agent's policed reader, whose class gate wants the class to exist.
    await createObject('ClusterHeld', { n: 1 });
    parseProxy = await startHoldingParseProxy(
      testParseConnection().serverURL,
      '/classes/ClusterHeld',
    );
    const parse = { ...testParseConnection(), serverURL: parseProxy.serverURL };
    // Heartbeats slower than the calls, so the progress seen is the tools' own.
    const mcp = { resumable: true, heartbeatIntervalMs: 10_000 };
    a = await startRedisNode({ redisUrl: '', redisCluster: cluster.urls, keyPrefix, parse, mcp });
    // B knows one startup node only: it discovers the others from the cluster.
    b = await startRedisNode({
      redisUrl: '',
      redisCluster: [cluster.urls[1]],
      keyPrefix,
      parse,
      mcp,
    });
    addTools(a, runs);
    addTools(b, runs);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await parseProxy?.close();
    await cluster?.stop();
  });

  it('the official SDK client uses one session through both nodes, and its keys share one slot', async () => {
    const proxy = await startRoundRobinProxy([a.url, b.url]);
    const who = token('alice');
    const { transport, client } = sdkClient(proxy.url, who, 'cluster-round-robin');
    try {
      await client.connect(transport);
      const session = transport.sessionId!;
      expect(session).toMatch(/^[A-Za-z0-9_-]{32}$/);
      for (let i = 0; i < 4; i++) {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain('cluster_echo');
        const result = await client.callTool({ name: 'cluster_echo', arguments: {} });
        expect(result.isError).toBeFalsy();
      }
      expect(proxy.served[0]).toBeGreaterThan(2);
      expect(proxy.served[1]).toBeGreaterThan(2);

      // Another principal cannot use the session on either node.
      for (const node of [a, b]) {
        const stolen = await rpc(
          node.url,
          { jsonrpc: '2.0', id: 3, method: 'tools/list' },
          { ...bearer(token('mallory')), 'Mcp-Session-Id': session },
        );
        expect(stolen.status).toBe(404);
      }

      // The session's keys: its hash, its user's index and the global index, all in one slot.
      const keys = keysWithSlots(cluster, keyPrefix);
      // The user index is named by a digest of the user (never the identifier itself).
      const userDigest = /sessions-of:([A-Za-z0-9_-]{43})$/m.exec([...keys.keys()].join('\n'))?.[1];
      expect(userDigest).toBeDefined();
      const sessionKeys = [...keys].filter(([key]) => key.includes('{sessions}'));
      expect(sessionKeys.map(([key]) => key).sort()).toEqual(
        [
          `${keyPrefix}{sessions}:session:${session}`,
          `${keyPrefix}{sessions}:sessions-all`,
          `${keyPrefix}{sessions}:sessions-of:${userDigest}`,
        ].sort(),
      );
      expect([...keys.keys()].join('\n')).not.toContain(who);
      expect(new Set(sessionKeys.map(([, slot]) => slot)).size).toBe(1);
      expect(sessionKeys[0][1]).toBe(Number(cluster.cli('CLUSTER', 'KEYSLOT', '{sessions}')));
      // No key of this run lacks a hash tag except the rate windows (one key per script).
      for (const key of keys.keys()) {
        if (!key.includes('{')) expect(key).toMatch(new RegExp(`^${keyPrefix}rl:`));
      }
    } finally {
      await client.close().catch(() => undefined);
      await proxy.close();
    }
  });

  it('a stream dropped on A resumes on B with Last-Event-ID: every event once, then the result', async () => {
    const who = token('bob');
    const init = await rpc(a.url, initializeBody(), bearer(who));
    expect(init.status).toBe(200);
    const headers = {
      ...bearer(who),
      'Mcp-Session-Id': init.headers.get('mcp-session-id')!,
      ...protocol,
    };
    const startedBefore = runs.started;
    const abortedBefore = runs.aborted;
    const body = {
      ...callBody(11, 'cluster_steps'),
      params: { name: 'cluster_steps', arguments: {}, _meta: { progressToken: 'p11' } },
    };
    const stream = await openSsePost(a.url, body, headers);
    expect(stream.status).toBe(200);
    const before = [];
    for (let event = await stream.next(); event; event = await stream.next()) {
      before.push(event);
      if (progressOf(before).length === 2) break;
    }
    stream.abort();
    const lastEventId = [...before].reverse().find((e) => e.id)!.id!;
    await delay(STEP_MS); // the call runs on while nobody listens

    const resumed = await openSsePost(
      b.url,
      undefined,
      { ...headers, 'Last-Event-ID': lastEventId },
      'GET',
    );
    expect(resumed.status).toBe(200);
    const after = await resumed.rest();
    expect([...progressOf(before), ...progressOf(after)]).toEqual([1, 2, 3, 4, 5, 6]);
    const answers = messagesOf(after).filter((m) => m.id === 11);
    expect(answers).toHaveLength(1);
    expect(JSON.parse(unwrapUntrusted(answers[0].result!.content![0].text))).toEqual({
      steps: STEPS,
    });
    const ids = [...before, ...after].map((e) => e.id).filter(Boolean);
    expect(new Set(ids).size).toBe(ids.length);
    expect(runs.started).toBe(startedBefore + 1);
    expect(runs.aborted).toBe(abortedBefore);

    // The stream's keys (events, lease, call, live channel) carry its id as hash tag: one slot.
    const streamId = lastEventId.slice(0, lastEventId.lastIndexOf('_'));
    const streamKeys = [...keysWithSlots(cluster, keyPrefix)].filter(([key]) =>
      key.startsWith(`${keyPrefix}{${streamId}}:`),
    );
    expect(streamKeys.map(([key]) => key).sort()).toEqual([
      `${keyPrefix}{${streamId}}:events-call:${streamId}`,
      `${keyPrefix}{${streamId}}:events:${streamId}`,
    ]);
    expect(new Set(streamKeys.map(([, slot]) => slot)).size).toBe(1);
  });

  it('the official SDK client resumes on the other node by itself when its stream drops', async () => {
    const proxy = await startRoundRobinProxy([a.url, b.url], { cutCallStreamAfterEvents: 3 });
    const { transport, client } = sdkClient(proxy.url, token('carol'), 'cluster-resume');
    const progress: number[] = [];
    const tokens: string[] = [];
    try {
      await client.connect(transport);
      const servedBefore = proxy.served[0] + proxy.served[1];
      const result = await client.callTool({ name: 'cluster_steps', arguments: {} }, undefined, {
        onprogress: (p) => {
          if (Number.isInteger(p.progress) && p.progress >= 1) progress.push(p.progress);
        },
        onresumptiontoken: (t) => tokens.push(t),
        timeout: 10_000,
      });
      expect(result.isError).toBeFalsy();
      const content = result.content as Array<{ text: string }>;
      expect(JSON.parse(unwrapUntrusted(content[0].text))).toEqual({ steps: STEPS });
      expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
      // The call's POST and at least one resume GET went through the proxy, to both nodes.
      expect(proxy.served[0] + proxy.served[1]).toBeGreaterThan(servedBefore + 1);
      expect(new Set(tokens).size).toBe(tokens.length);
    } finally {
      await client.close().catch(() => undefined);
      await proxy.close();
    }
  });

  it('the SDK client cancels through the other node: the call and its Parse request abort', async () => {
    const proxy = await startRoundRobinProxy([a.url, b.url]);
    const { transport, client } = sdkClient(proxy.url, token('dave'), 'cluster-cancel');
    try {
      await client.connect(transport);
      await connectSettled(proxy);
      const heldBefore = parseProxy.held;
      const abortedBefore = parseProxy.aborted;
      const servedBefore = [...proxy.served];
      const controller = new AbortController();
      const call = client.callTool({ name: 'cluster_held_count', arguments: {} }, undefined, {
        signal: controller.signal,
        timeout: 15_000,
      });
      await eventually(() => expect(parseProxy.held).toBe(heldBefore + 1));
      const callServedBy = proxy.served.findIndex((n, i) => n > servedBefore[i]);
      controller.abort('user');
      await expect(call).rejects.toThrow();
      // notifications/cancelled went to the other node, which reached the call through Redis.
      await eventually(() =>
        expect(proxy.served[1 - callServedBy]).toBe(servedBefore[1 - callServedBy] + 1),
      );
      await eventually(() => expect(parseProxy.aborted).toBe(abortedBefore + 1));
    } finally {
      await client.close().catch(() => undefined);
      await proxy.close();
    }
  });

  it("the SDK client's confirmation answer, sent through the other node, reaches the waiting call", async () => {
    const proxy = await startRoundRobinProxy([a.url, b.url]);
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url), {
      requestInit: { headers: bearer(token('gina')) },
    });
    const client = new Client(
      { name: 'cluster-elicit', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return Promise.resolve({ action: 'accept', content: { confirm: true } });
    });
    try {
      await client.connect(transport);
      await connectSettled(proxy);
      const servedBefore = [...proxy.served];
      const result = await client.callTool({ name: 'cluster_confirm', arguments: {} }, undefined, {
        timeout: 10_000,
      });
      expect(result.isError).toBeFalsy();
      const content = result.content as Array<{ text: string }>;
      expect(JSON.parse(unwrapUntrusted(content[0].text))).toEqual({ confirmed: true });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(/cluster_confirm/);
      // The call's POST and the answer's POST went to different nodes.
      expect(proxy.served[0] - servedBefore[0]).toBe(1);
      expect(proxy.served[1] - servedBefore[1]).toBe(1);
    } finally {
      await client.close().catch(() => undefined);
      await proxy.close();
    }
  });

  it('DELETE through one node ends the session everywhere and closes its stream on the other', async () => {
    const who = token('hank');
    const init = await rpc(a.url, initializeBody(), bearer(who));
    const headers = { ...bearer(who), 'Mcp-Session-Id': init.headers.get('mcp-session-id')! };
    const stream = await openSsePost(a.url, undefined, headers, 'GET');
    expect(stream.status).toBe(200);
    const closed = stream.rest();
    const deleted = await fetch(b.url, { method: 'DELETE', headers });
    expect(deleted.status).toBe(204);
    await expect(closed).resolves.toBeDefined(); // the stream on A ended
    for (const node of [a, b]) {
      const after = await rpc(node.url, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, headers);
      expect(after.status).toBe(404);
    }
  });

  it('the SDK client hits one rate limit shared by both nodes: 60 requests, then refusals on each', async () => {
    const proxy = await startRoundRobinProxy([a.url, b.url]);
    const { transport, client } = sdkClient(proxy.url, token('erin'), 'cluster-rate');
    try {
      await client.connect(transport);
      const servedBefore = [...proxy.served];
      // initialize counted as the first of the principal's 60 requests; 59 tool calls follow.
      for (let i = 0; i < 59; i++) {
        const result = await client.callTool({ name: 'cluster_echo', arguments: {} });
        // The call's number and text show in a failure.
        const text = (result.content as Array<{ text: string }>)[0].text;
        expect([i, result.isError === true, text]).toEqual([
          i,
          false,
          expect.stringMatching(/"ok"/),
        ]);
      }
      // Both nodes took about half of the calls.
      expect(proxy.served[0] - servedBefore[0]).toBeGreaterThanOrEqual(28);
      expect(proxy.served[1] - servedBefore[1]).toBeGreaterThanOrEqual(28);
      for (let i = 0; i < 2; i++) {
        const refused = await client.callTool({ name: 'cluster_echo', arguments: {} });
        expect(refused.isError).toBe(true);
        expect(refused._meta?.['parse.error_code']).toBe('rate_limited');
        const text = (refused.content as Array<{ text: string }>)[0].text;
        expect(text).toMatch(/Rate limit exceeded \(60 requests per 60s\)/);
        expect(text).not.toMatch(/"ok"/);
      }
      // Another principal has its own window.
      const other = await rpc(b.url, callBody(1, 'cluster_echo'), bearer(token('frank')));
      expect(JSON.stringify(other.json)).not.toMatch(/rate_limited/);
    } finally {
      await client.close().catch(() => undefined);
      await proxy.close();
    }
  });
});

interface ToolResult {
  isError?: boolean;
  content: Array<{ text: string }>;
  _meta?: Record<string, unknown>;
}

describeWithCluster('a node on a Redis Cluster whose master dies and comes back', () => {
  let cluster: LocalRedisCluster;
  let node: RedisNode;

  beforeAll(async () => {
    cluster = await startLocalRedisCluster(3);
    node = await startRedisNode({
      redisUrl: '',
      redisCluster: cluster.urls,
      keyPrefix: runKeyPrefix('cluster-outage'),
    });
    node.tools.register({
      name: 'cluster_echo',
      description: 'Answers at once.',
      handler: () => ({ ok: true }),
    });
  }, 60_000);
  afterAll(async () => {
    await node?.close();
    await cluster?.stop();
  });

  const call = async (who: string, id: number) => {
    const started = Date.now();
    const res = await rpc(node.url, callBody(id, 'cluster_echo'), bearer(who));
    return {
      status: res.status,
      retryAfter: Number(res.headers.get('retry-after')),
      error: res.json?.error as { code: number; message: string } | undefined,
      result: res.json?.result as ToolResult | undefined,
      ms: Date.now() - started,
    };
  };

  it('refuses clearly what lives on the dead master, serves the rest, and recovers by itself', async () => {
    const who = token('grace');
    const init = await rpc(node.url, initializeBody(1), bearer(who));
    expect(init.status).toBe(200);
    const session = { ...bearer(who), 'Mcp-Session-Id': init.headers.get('mcp-session-id')! };
    const ping = () => rpc(node.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, session);
    expect((await ping()).status).toBe(200);
    // Principals whose rate windows spread over the three masters.
    const users = Array.from({ length: 24 }, (_, i) => token(`u${i}`));
    for (const [i, user] of users.entries()) {
      expect((await call(user, 10 + i)).result?.isError).toBeFalsy();
    }

    const sessionsMaster = cluster.masterOfSlot(
      Number(cluster.cli('CLUSTER', 'KEYSLOT', '{sessions}')),
    );
    const dead = cluster.nodes.find((n) => n.port === sessionsMaster)!;
    await dead.kill();

    // The session cannot be checked: 503 with Retry-After, never "Session not found".
    const during = await ping();
    expect(during.status).toBe(503);
    expect(during.headers.get('retry-after')).toBeTruthy();
    expect(JSON.stringify(during.json)).toMatch(/session store unavailable/i);
    expect(JSON.stringify(during.json)).not.toMatch(/Session not found/);

    // Calls whose rate window lives on the dead master are refused clearly and quickly; the others
    // are served: the process keeps going.
    const outcomes = [];
    for (const [i, user] of users.entries()) outcomes.push(await call(user, 100 + i));
    // A limiter that cannot count answers 503 (not 429, not a tool result) with Retry-After.
    const refused = outcomes.filter((o) => o.status !== 200);
    const served = outcomes.filter((o) => o.status === 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThan(0);
    for (const { status, error, result, retryAfter } of refused) {
      expect(status).toBe(503);
      expect(result).toBeUndefined();
      expect(error?.code).toBe(-32000);
      expect(error?.message).toMatch(/Rate limiter unavailable .*Redis/);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(5);
    }
    for (const { result } of served) {
      expect(JSON.parse(unwrapUntrusted(result!.content[0].text))).toEqual({ ok: true });
    }
    // Refused within the limiter's 1 s timeout (about 0.3-0.5 s here), never left hanging.
    for (const { ms } of outcomes) expect(ms).toBeLessThan(1500);
    // A new session cannot be opened while the session slot's master is down; no id is issued.
    const refusedInit = await rpc(node.url, initializeBody(3), bearer(token('henry')));
    expect(refusedInit.status).toBe(503);
    expect(JSON.stringify(refusedInit.json)).toMatch(/unavailable/i);
    expect(refusedInit.headers.get('mcp-session-id')).toBeNull();
    const pingNoSession = await rpc(
      node.url,
      { jsonrpc: '2.0', id: 4, method: 'ping' },
      bearer(who),
    );
    expect(pingNoSession.json).toEqual({ jsonrpc: '2.0', id: 4, result: {} });

    // The master comes back (empty: no persistence here) and rejoins with its slots.
    await dead.start();
    await cluster.waitOk();
    // Each principal is asked until served once (so no window fills up while waiting).
    const recovered = new Set<string>();
    for (let attempt = 0; attempt < 100 && recovered.size < users.length; attempt++) {
      for (const [i, user] of users.entries()) {
        const outcome = recovered.has(user) ? undefined : await call(user, 1000 + i);
        if (outcome && outcome.status === 200 && !outcome.result?.isError) {
          recovered.add(user);
        }
      }
      if (recovered.size < users.length) await delay(100);
    }
    expect(recovered.size).toBe(users.length);
    const again = await rpc(node.url, initializeBody(5), bearer(token('ivy')));
    expect(again.status).toBe(200);
    expect(again.headers.get('mcp-session-id')).toMatch(/^[A-Za-z0-9_-]{32}$/);
  }, 60_000);
});

describeWithCluster('a streaming call whose node is killed, on a Redis Cluster', () => {
  const LEASE_MS = 1_000;
  const mcp = { resumable: true, heartbeatIntervalMs: 300, callLeaseMs: LEASE_MS };
  let cluster: LocalRedisCluster;
  let a: NodeProcess;
  let b: RedisNode;

  beforeAll(async () => {
    cluster = await startLocalRedisCluster(3);
    const keyPrefix = runKeyPrefix('cluster-death');
    [a, b] = await Promise.all([
      startNodeProcess({ redisUrl: '', redisCluster: cluster.urls, keyPrefix, mcp }),
      startRedisNode({ redisUrl: '', redisCluster: cluster.urls, keyPrefix, mcp }),
    ]);
  }, 90_000);
  afterAll(async () => {
    await a?.kill();
    await b?.close();
    await cluster?.stop();
  });

  it('the client resuming on the other node gets the missed events once, then a clear error', async () => {
    const who = token('kim');
    const init = await rpc(b.url, initializeBody(), bearer(who));
    expect(init.status).toBe(200);
    const headers = {
      ...bearer(who),
      'Mcp-Session-Id': init.headers.get('mcp-session-id')!,
      ...protocol,
    };
    const {
      before,
      after,
      lastEventId,
      elapsedMs: elapsed,
    } = await killMidStreamAndResume(a, b, headers);

    const steps = [...progressOf(before), ...progressOf(after)];
    expect(steps.length).toBeGreaterThan(2);
    expect(steps).toEqual(steps.map((_, i) => i + 1)); // each once, in order
    const answers = messagesOf(after).filter((m) => m.id === 41);
    expect(answers).toHaveLength(1);
    expect(answers[0].result).toBeUndefined();
    expect(answers[0].error).toMatchObject({ code: -32000 });
    expect(String(answers[0].error!.message)).toMatch(/node running this call stopped/);
    expect(elapsed).toBeLessThan(LEASE_MS * 4);

    // The stream's keys, the lease's included while it lived, share the stream's slot.
    const streamId = lastEventId.slice(0, lastEventId.lastIndexOf('_'));
    const slot = Number(cluster.cli('CLUSTER', 'KEYSLOT', `{${streamId}}`));
    const master = cluster.masterOfSlot(slot);
    const held = cluster
      .cliOn(master, '--scan', '--pattern', `*{${streamId}}*`)
      .split('\n')
      .filter(Boolean);
    expect(held.length).toBeGreaterThanOrEqual(2);
    for (const key of held) expect(Number(cluster.cli('CLUSTER', 'KEYSLOT', key))).toBe(slot);
  }, 60_000);
});
