import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { findFreePort } from '../../src/embedded/free-port';
import { seedDemo } from '../harness/demo-data';
import { messagesOf, openSsePost } from '../mcp/mcp-test-app';
import { installed, writeTemp } from '../hosts/netns';
import {
  openSession,
  rpc,
  runKeyPrefix,
  startChildNode,
  startOwnRedis,
  redisServerInstalled,
  type NodeProcess,
  type OwnRedis,
} from '../redis/redis-nodes';
import { notifiedAfterWrite } from './latency';
import { startLiveQueryStack, type LiveQueryStack } from './live-query-stack';
import { createOrder } from './live-app';

/**
 * Resource subscriptions across nodes: two Parse LiveQuery servers joined by Parse's own Redis
 * pub/sub, two MCP nodes (node A on LiveQuery server A, node B on B) sharing sessions and
 * subscriptions in that Redis, HAProxy in front sending the session's requests (POST, DELETE) to A
 * and its GET stream to B, each falling back to the other node when its own is down. Official SDK
 * client over Streamable HTTP, the demo's users (alice: acme, bob: globex). A Redis of the suite's
 * own keeps Parse's pub/sub channels away from other suites.
 */
const skipReason = !installed('haproxy')
  ? 'haproxy is not installed (apt-get install haproxy)'
  : !redisServerInstalled()
    ? 'redis-server is not installed'
    : undefined;
if (skipReason) console.warn(`SKIPPED live-nodes suite: ${skipReason}`);
const describeWithProxy = skipReason ? describe.skip : describe;

const PER_SESSION = 3;
const OPERATOR_KEY = `operator-${randomBytes(6).toString('hex')}`;

function startLiveNode(env: Record<string, string>): Promise<NodeProcess> {
  return startChildNode({
    script: join(__dirname, 'live-node.child.ts'),
    env,
    label: 'live node',
    startMs: 90_000,
  });
}

/**
 * Requests to `posts` (its backup: `gets`), GET streams to `gets` (backup: `posts`): dead nodes
 * leave rotation by health check, a refused connect is retried on the other; `X-Served-By` names
 * the node.
 */
function routingConfig(bind: string, posts: string, gets: string): string {
  const server = (name: string, address: string, backup: boolean) =>
    `  server ${name} ${address} check inter 300 fall 2 rise 2${backup ? ' backup' : ''}`;
  return [
    'global',
    '  maxconn 256',
    'defaults',
    '  mode http',
    '  option http-server-close',
    '  option redispatch',
    '  retries 3',
    '  timeout connect 1s',
    '  timeout client 5m',
    '  timeout server 5m',
    'frontend mcp',
    `  bind ${bind}`,
    '  use_backend streams if METH_GET',
    '  default_backend calls',
    'backend calls',
    '  http-response set-header X-Served-By %s',
    server('a', posts, false),
    server('b', gets, true),
    'backend streams',
    '  http-response set-header X-Served-By %s',
    server('b', gets, false),
    server('a', posts, true),
    '',
  ].join('\n');
}

async function until(check: () => boolean | Promise<boolean>, ms = 3000, what = 'condition') {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`${what} not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - start;
}

describeWithProxy('resource subscriptions across two nodes and two LiveQuery servers', () => {
  let redis: OwnRedis;
  let stacks: { a: LiveQueryStack; b: LiveQueryStack };
  let nodes: { a: NodeProcess; b: NodeProcess };
  let haproxy: ChildProcess | undefined;
  let config: string | undefined;
  let lb: string;
  let keyPrefix: string;
  let tokens: { alice: string; bob: string; carol: string };
  let client: Client | undefined;

  beforeAll(async () => {
    const seeded = await seedDemo();
    tokens = { alice: seeded.alice, bob: seeded.bob, carol: seeded.carol };
    redis = await startOwnRedis();
    const [a, b] = await Promise.all([
      startLiveQueryStack(['Order'], { redisURL: redis.url }),
      startLiveQueryStack(['Order'], { redisURL: redis.url }),
    ]);
    stacks = { a, b };
    keyPrefix = runKeyPrefix('live-nodes');
    const nodeEnv = (stack: LiveQueryStack) => ({
      PARSE_URL: stack.serverURL,
      REDIS_URL: redis.url,
      KEY_PREFIX: keyPrefix,
      OPERATOR_KEY,
      LIVE_PER_SESSION: String(PER_SESSION),
    });
    const [nodeA, nodeB] = await Promise.all([
      startLiveNode(nodeEnv(stacks.a)),
      startLiveNode(nodeEnv(stacks.b)),
    ]);
    nodes = { a: nodeA, b: nodeB };
    const port = await findFreePort();
    config = writeTemp(
      'live-haproxy.cfg',
      routingConfig(`127.0.0.1:${port}`, new URL(nodeA.url).host, new URL(nodeB.url).host),
    );
    haproxy = spawn('haproxy', ['-f', config, '-db'], { stdio: 'ignore' });
    lb = `http://127.0.0.1:${port}/mcp`;
    await until(
      async () => {
        const post = await fetch(lb, { method: 'POST' }).catch(() => undefined);
        const get = await fetch(lb, { method: 'GET' }).catch(() => undefined);
        return post?.headers.get('x-served-by') === 'a' && get?.headers.get('x-served-by') === 'b';
      },
      20_000,
      'HAProxy with both nodes up',
    );
  }, 240_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    haproxy?.kill('SIGKILL');
    if (config) rmSync(config, { force: true });
    await nodes?.a.kill();
    await nodes?.b.kill();
    await stacks?.a.stop();
    await stacks?.b.stop();
    await redis?.stop();
  }, 60_000);

  const subs = async (stack: LiveQueryStack) => (await stack.counts()).subscriptions;

  it('subscribe on A, updates on B’s stream; B dies, the session resumes on A and is still notified; DELETE ends all', async () => {
    const served: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(lb), {
      requestInit: { headers: { Authorization: `Bearer ${tokens.alice}` } },
      reconnectionOptions: {
        initialReconnectionDelay: 300,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 8,
      },
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        served.push(`${init?.method ?? 'GET'} ${res.headers.get('x-served-by')}`);
        return res;
      },
    });
    client = new Client({ name: 'live-nodes-e2e', version: '1.0.0' });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    await until(() => served.includes('GET b'), 3000, 'the GET stream on node B');
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);

    const uri = 'parse://Order/count';
    await client.subscribeResource({ uri });
    expect(served.filter((s) => s.startsWith('POST')).every((s) => s === 'POST a')).toBe(true);
    // Node B (the stream's) runs it on LiveQuery server B; node A, which took the call, runs nothing.
    await until(async () => (await subs(stacks.b)) === 1, 3000, 'the subscription on B');
    expect(await subs(stacks.a)).toBe(0);

    // Bob's tenant never reaches her; an acme order written through Parse Server A reaches her
    // stream on B through LiveQuery server B (Parse's Redis pub/sub) within 1 s of the write.
    await createOrder(stacks.a, 'globex');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(updates).toEqual([]);
    await notifiedAfterWrite(
      'the update on B',
      () => createOrder(stacks.a, 'acme'),
      () => updates.length >= 1,
    );
    expect(updates).toEqual([uri]);

    // The per-session cap counts the subscriptions made on every node: two more straight on B
    // (where the stream is), then a fourth through A is refused with the setting named.
    const headers = {
      Authorization: `Bearer ${tokens.alice}`,
      'Mcp-Session-Id': sessionId,
      'MCP-Protocol-Version': '2025-11-25',
    };
    const subscribeOn = (url: string, id: number, target: string) =>
      rpc(
        url,
        { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri: target } },
        headers,
      );
    const extra = ['parse://Order/samples', 'parse://Order/query?keys=status'];
    for (const [i, target] of extra.entries()) {
      const answer = await subscribeOn(nodes.b.url, 100 + i, target);
      expect(answer.json?.error).toBeUndefined();
    }
    await until(async () => (await subs(stacks.b)) === 3, 3000, 'three subscriptions on B');
    await expect(
      client.subscribeResource({ uri: 'parse://Order/query?keys=total' }),
    ).rejects.toThrow(/liveQuery\.maxSubscriptionsPerSession/);
    for (const target of extra) await client.unsubscribeResource({ uri: target });
    await until(async () => (await subs(stacks.b)) === 1, 3000, 'the unsubscribes reaching B');
    expect(await subs(stacks.a)).toBe(0);

    // Node B dies with her stream. The SDK reconnects its GET, which HAProxy now sends to A: A
    // loads her subscription from Redis, runs it on LiveQuery server A, and tells her to re-read.
    updates.length = 0;
    served.length = 0;
    await nodes.b.kill();
    await until(() => updates.includes(uri), 15_000, 'the re-read notice from A');
    expect(served).toContain('GET a');
    await until(async () => (await subs(stacks.a)) === 1, 3000, 'the subscription on A');
    expect(await subs(stacks.b)).toBe(0);
    updates.length = 0;
    await createOrder(stacks.a, 'globex');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(updates).toEqual([]);
    await notifiedAfterWrite(
      'the update on A',
      () => createOrder(stacks.a, 'acme'),
      () => updates.length >= 1,
    );
    expect(updates).toEqual([uri]);

    // A newer stream of the session on the same node takes over: its subscription runs for the
    // new stream, which is told to re-read and then hears the next acme order.
    const newer = await openSsePost(nodes.a.url, undefined, headers, 'GET');
    expect(newer.status).toBe(200);
    const heard: string[] = [];
    const reading = (async () => {
      for (let event = await newer.next(); event; event = await newer.next()) {
        for (const m of messagesOf([event])) {
          if (m.method === 'notifications/resources/updated')
            heard.push(String((m.params as { uri?: string } | undefined)?.uri));
        }
      }
    })();
    await until(() => heard.includes(uri), 3000, 'the re-read notice on the newer stream');
    heard.length = 0;
    await createOrder(stacks.a, 'acme');
    await until(() => heard.length === 1, 1000, 'the update on the newer stream');
    expect(heard).toEqual([uri]);
    expect(await subs(stacks.a)).toBe(1);

    // DELETE ends the session: no LiveQuery server holds a subscription, and Redis forgot hers.
    await transport.terminateSession();
    await until(
      async () => (await subs(stacks.a)) === 0 && (await subs(stacks.b)) === 0,
      3000,
      'no subscription left',
    );
    await reading; // DELETE closed the newer stream too
    await client.close();
    client = undefined;
    const inspect = new Redis(redis.url);
    try {
      expect(await inspect.keys(`${keyPrefix}*live-subscriptions*`)).toEqual([]);
    } finally {
      inspect.disconnect();
    }
  }, 90_000);

  it('a recorded subscription the stream’s node cannot plan: kept and retried while Parse is down, dropped on every node when policy refuses it; the client is told either way', async () => {
    // Node B died in the case above: the session and its stream are on A. Another node (the
    // test, through Redis) records the URIs and announces them, as a node that took the
    // subscribe before a policy change would.
    const headers = await openSession(nodes.a.url, tokens.alice);
    const sessionId = headers['Mcp-Session-Id'];
    const stream = await openSsePost(nodes.a.url, undefined, headers, 'GET');
    expect(stream.status).toBe(200);
    const heard: string[] = [];
    const reading = (async () => {
      for (let event = await stream.next(); event; event = await stream.next()) {
        for (const m of messagesOf([event])) {
          if (m.method === 'notifications/resources/updated')
            heard.push(String((m.params as { uri?: string } | undefined)?.uri));
        }
      }
    })();
    const inspect = new Redis(redis.url);
    const key = `${keyPrefix}live-subscriptions:${sessionId}`;
    const recordElsewhere = async (uri: string) => {
      await inspect.sadd(key, uri);
      const message = JSON.stringify({ from: 'another-node', session: sessionId });
      await inspect.publish(`${keyPrefix}live-subscriptions:changed`, message);
    };
    const mine = async () => (await stacks.a.counts(tokens.alice)).subscriptions;
    try {
      // Refused by policy (Customer is not in liveQuery.classNames): gone from Redis, so from
      // every node, and the client is told to re-read (where it sees why). Nothing runs.
      const refused = 'parse://Customer/count';
      await recordElsewhere(refused);
      await until(() => heard.includes(refused), 5000, 'the notice of the refused one');
      await until(async () => !(await inspect.sismember(key, refused)), 3000, 'its record gone');
      expect(await mine()).toBe(0);

      // Parse REST briefly down while the node plans: the record stays (in Redis), the client is
      // told, and the node tries again until Parse answers, then runs it and tells it to re-read.
      const kept = 'parse://Order/count';
      await stacks.a.restDown(3000);
      await recordElsewhere(kept);
      await until(() => heard.includes(kept), 5000, 'the notice of the failed check');
      expect(await inspect.sismember(key, kept)).toBe(1);
      expect(await mine()).toBe(0);
      await until(async () => (await mine()) === 1, 15_000, 'the subscription once Parse is back');
      await until(() => heard.filter((u) => u === kept).length === 2, 3000, 'the re-read notice');
      expect(await inspect.sismember(key, kept)).toBe(1);
      expect(heard.filter((u) => u === refused)).toHaveLength(1);
    } finally {
      await fetch(nodes.a.url, { method: 'DELETE', headers });
      inspect.disconnect();
    }
    await reading;
    await until(async () => (await mine()) === 0, 3000, 'no subscription after DELETE');
  }, 60_000);

  it('with Redis down, subscribe is refused with a clear error and the node keeps serving', async () => {
    const headers = await openSession(nodes.a.url, tokens.alice);
    const subscribe = { jsonrpc: '2.0', id: 7, method: 'resources/subscribe' };
    const params = { uri: 'parse://Order/count' };
    await redis.stop();
    const refused = await rpc(nodes.a.url, { ...subscribe, params }, headers);
    expect(refused.status).toBe(503);
    expect(JSON.stringify(refused.json)).toMatch(/unavailable/i);
    expect(await subs(stacks.a)).toBe(0);
    await redis.start();
    // The node answers again: a new session (the old one went with that Redis) subscribes.
    let fresh: Record<string, string> | undefined;
    await until(
      async () => {
        fresh = await openSession(nodes.a.url, tokens.alice).catch(() => undefined);
        return fresh !== undefined;
      },
      15_000,
      'a session after Redis came back',
    );
    const answer = await rpc(nodes.a.url, { ...subscribe, params }, fresh!);
    expect(answer.json?.error).toBeUndefined();
    await rpc(
      nodes.a.url,
      { jsonrpc: '2.0', id: 8, method: 'resources/unsubscribe', params },
      fresh!,
    );
  }, 60_000);
});
