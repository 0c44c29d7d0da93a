import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Redis } from 'ioredis';
import { ParseAgentFactory } from 'nestjs-parse-agent';
import type { LiveResourceSubscriptions } from 'nestjs-parse-agent/live/live-resource-subscriptions';
import { parseResourceUri } from 'nestjs-parse-agent/mcp/resource-uri';
import { PARSE_AGENT_LIVE_QUERY } from 'nestjs-parse-agent/nest/live-query.host';
import { Subject } from 'rxjs';
import { seedDemo } from '../harness/demo-data';
import { redisReachable, runKeyPrefix, SHARED_REDIS_URL } from '../redis/redis-nodes';
import { connectListener, createOrder, pause, startLiveApp, until, type LiveApp } from './live-app';
import { startLiveQueryStack, type LiveQueryStack } from './live-query-stack';

/**
 * Resource subscriptions kept in Redis (one node, the test playing the other nodes through Redis)
 * on a real Parse LiveQuery server, with the official MCP SDK client over Streamable HTTP: a
 * subscription whose check keeps failing while Parse is down is retried for as long as the stream
 * is open (never dropped by count), the node cap holds against concurrent subscribes, and what a
 * node cannot run or did not hear about reaches the client anyway. The retry waits and the
 * re-read interval are shortened through the internal `timing` option; the schedule is the real one.
 */
const RETRY_WAITS = [200, 400, 800];
const RESYNC_MS = 1000;
const NODE_CAP = 2;

(redisReachable(SHARED_REDIS_URL) ? describe : describe.skip)(
  'resource subscriptions in Redis: retries, the node cap, lost announcements',
  () => {
    let stack: LiveQueryStack;
    let live: LiveApp;
    let inspect: Redis;
    let keyPrefix: string;
    let tokens: { alice: string; bob: string; carol: string };
    const clients: Client[] = [];
    const transports: StreamableHTTPClientTransport[] = [];

    beforeAll(async () => {
      const seeded = await seedDemo();
      tokens = { alice: seeded.alice, bob: seeded.bob, carol: seeded.carol };
      stack = await startLiveQueryStack(['Order']);
      keyPrefix = runKeyPrefix('live-retries');
      live = await startLiveApp(stack, {
        redis: { url: SHARED_REDIS_URL, keyPrefix },
        liveQuery: {
          maxSubscriptions: NODE_CAP,
          timing: { planRetryDelaysMs: RETRY_WAITS, resyncIntervalMs: RESYNC_MS },
        },
      });
      inspect = new Redis(SHARED_REDIS_URL);
    }, 120_000);

    afterAll(async () => {
      for (const c of clients) await c.close().catch(() => undefined);
      await live?.app.close();
      if (inspect) {
        const keys = await inspect.keys(`${keyPrefix}*`);
        if (keys.length) await inspect.del(...keys);
        inspect.disconnect();
      }
      await stack?.stop();
    });

    // A failed case leaves nothing behind for the next: its sessions end, their subscriptions go.
    afterEach(async () => {
      for (const t of transports.splice(0)) await t.terminateSession().catch(() => undefined);
      await until(async () => (await subs()) === 0).catch(() => undefined);
    });

    async function connect(token: string) {
      const listener = await connectListener(live.url, token, { name: 'live-retries' });
      clients.push(listener.client);
      transports.push(listener.transport);
      // The server attaches the stream once its first bytes went out: give it a moment.
      await pause(150);
      return { ...listener, sessionId: listener.transport.sessionId! };
    }

    const key = (sessionId: string) => `${keyPrefix}live-subscriptions:${sessionId}`;
    /** As another node records a subscribe; `announce: false` as if its announcement was lost. */
    async function recordElsewhere(sessionId: string, uri: string, announce = true) {
      await inspect.sadd(key(sessionId), uri);
      if (!announce) return;
      const message = JSON.stringify({ from: 'another-node', session: sessionId });
      await inspect.publish(`${keyPrefix}live-subscriptions:changed`, message);
    }
    const subs = async (token?: string) => (await stack.counts(token)).subscriptions;
    const service = () => live.app.get<LiveResourceSubscriptions>(PARSE_AGENT_LIVE_QUERY);
    const count = (list: string[], uri: string) => list.filter((u) => u === uri).length;

    it('Parse down past the whole retry schedule: retried while the stream is open, the client told when the doubling ends, running once Parse is back', async () => {
      const alice = await connect(tokens.alice);
      const uri = 'parse://Order/count';
      const DOWN_MS = 7000;
      const downSince = Date.now();
      await stack.restDown(DOWN_MS);
      await recordElsewhere(alice.sessionId, uri);
      // The first failed check: the client re-reads (and sees the error).
      await until(() => count(alice.updates, uri) === 1, 5000);
      // Every wait of the schedule spent, still failing: told again, while Parse is still down.
      await until(() => count(alice.updates, uri) === 2, DOWN_MS);
      expect(Date.now() - downSince).toBeLessThan(DOWN_MS);
      expect(await subs(tokens.alice)).toBe(0);
      expect(await inspect.sismember(key(alice.sessionId), uri)).toBe(1);

      // Parse is back: a later try (at the longest wait) passes, the subscription runs and the
      // client re-reads what it missed; then a write reaches it.
      await until(async () => (await subs(tokens.alice)) === 1, DOWN_MS + 15_000);
      await until(() => count(alice.updates, uri) === 3, 3000);
      alice.updates.length = 0;
      await createOrder(stack, 'acme');
      await until(() => alice.updates.length === 1, 3000);
      expect(alice.updates).toEqual([uri]);

      await alice.transport.terminateSession();
      await until(async () => (await subs()) === 0);
    }, 60_000);

    it('concurrent subscribes never take the node past liveQuery.maxSubscriptions: the extra one is refused and not kept in Redis', async () => {
      const carol = await connect(tokens.carol);
      const agent = live.app
        .get(ParseAgentFactory)
        .create({ sessionToken: tokens.carol, tenantId: 'acme' });
      const session = { id: carol.sessionId, ended$: new Subject<void>() };
      const uris = [
        'parse://Order/count',
        'parse://Order/samples',
        'parse://Order/query?keys=status',
      ];
      // All three start before any is recorded, so each passes the first look at the cap.
      const settled = await Promise.allSettled(
        uris.map((uri) => service().subscribe(agent, session, parseResourceUri(uri))),
      );
      const refused = settled.filter((r) => r.status === 'rejected');
      expect(refused).toHaveLength(1);
      expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(
        /liveQuery\.maxSubscriptions\b/,
      );
      expect(service().stats().subscriptions).toBe(NODE_CAP);
      expect(await inspect.scard(key(carol.sessionId))).toBe(NODE_CAP);
      await until(async () => (await subs(tokens.carol)) === NODE_CAP);

      await carol.transport.terminateSession();
      await until(async () => (await subs()) === 0);
    }, 30_000);

    it('a recorded URI the full node cannot run is told to the client, refused on subscribe, and picked up by the periodic re-read once a slot frees; so is a record whose announcement was lost', async () => {
      const bob = await connect(tokens.bob);
      const held = ['parse://Order/count', 'parse://Order/samples'];
      for (const uri of held) await bob.client.subscribeResource({ uri });
      await until(async () => (await subs(tokens.bob)) === NODE_CAP);

      // Another node records a third: this node is full, so it stays idle here, and the client
      // is told (it re-reads) instead of believing it runs. A subscribe of it says why.
      const third = 'parse://Order/query?keys=status';
      await recordElsewhere(bob.sessionId, third);
      await until(() => bob.updates.includes(third), 3000);
      await expect(bob.client.subscribeResource({ uri: third })).rejects.toThrow(
        /liveQuery\.maxSubscriptions\b/,
      );
      expect(await subs(tokens.bob)).toBe(NODE_CAP);
      // Told once, not on every re-read: two re-reads go by first.
      await pause(RESYNC_MS * 2.5);
      expect(count(bob.updates, third)).toBe(1);

      // A slot frees on this node (its own unsubscribe announces nothing it would hear): the
      // periodic re-read starts the third, and the client re-reads it.
      await bob.client.unsubscribeResource({ uri: held[0] });
      await until(() => count(bob.updates, third) === 2, RESYNC_MS * 4);
      await until(async () => (await subs(tokens.bob)) === NODE_CAP);
      expect(service().subscriptionsOf(bob.sessionId).sort()).toEqual([held[1], third].sort());

      // A record made elsewhere whose announcement never came: picked up all the same.
      await bob.client.unsubscribeResource({ uri: held[1] });
      await until(async () => (await subs(tokens.bob)) === 1);
      const quiet = 'parse://Order/query?keys=total';
      await recordElsewhere(bob.sessionId, quiet, false);
      await until(async () => (await subs(tokens.bob)) === NODE_CAP, RESYNC_MS * 4);
      expect(service().subscriptionsOf(bob.sessionId)).toContain(quiet);
      // The changes since its subscribe went unheard: the client is told to re-read it.
      await until(() => bob.updates.includes(quiet), 3000);
      expect(count(bob.updates, quiet)).toBe(1);

      await bob.transport.terminateSession();
      await until(async () => (await subs()) === 0);
    }, 30_000);
  },
);
