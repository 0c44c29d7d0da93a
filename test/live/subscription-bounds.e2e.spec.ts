import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ParseAgentFactory } from 'nestjs-parse-agent';
import { parseResourceUri } from 'nestjs-parse-agent/mcp/resource-uri';
import { Subject } from 'rxjs';
import { PARSE_AGENT_LIVE_QUERY } from 'nestjs-parse-agent/nest/live-query.host';
import type { LiveResourceSubscriptions } from 'nestjs-parse-agent/live/live-resource-subscriptions';
import { seedDemo } from '../harness/demo-data';
import {
  redisServerInstalled,
  runKeyPrefix,
  startOwnRedis,
  type OwnRedis,
} from '../redis/redis-nodes';
import {
  connectListener,
  createOrder,
  pause,
  startLiveApp,
  until,
  type LiveApp,
  type LiveListener,
} from './live-app';
import { startLiveQueryStack, type LiveQueryStack } from './live-query-stack';

/**
 * The bounds of resource subscriptions on a real Parse LiveQuery server, with the official MCP SDK
 * client over Streamable HTTP: the node-wide cap (`liveQuery.maxSubscriptions`) refuses with an
 * error that names it while everything else keeps serving, and a session that expires takes its
 * subscriptions off the LiveQuery server (its own count is the oracle).
 */
describe('resource subscription bounds: the global cap and session expiry', () => {
  let stack: LiveQueryStack;
  let tokens: { alice: string; bob: string; carol: string };
  const clients: Client[] = [];

  beforeAll(async () => {
    const seeded = await seedDemo();
    tokens = { alice: seeded.alice, bob: seeded.bob, carol: seeded.carol };
    stack = await startLiveQueryStack(['Order']);
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await stack?.stop();
  });

  async function connect(live: LiveApp, token: string): Promise<LiveListener> {
    const listener = await connectListener(live.url, token, {
      name: 'live-bounds',
      // The expiry case: a stream the server ended is not reopened behind the test's back.
      reconnectionOptions: {
        maxReconnectionDelay: 1000,
        initialReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 0,
      },
    });
    clients.push(listener.client);
    return listener;
  }

  const subs = async () => (await stack.counts()).subscriptions;
  const socks = async (token?: string) => (await stack.counts(token)).sockets;

  describe('liveQuery.maxSubscriptions', () => {
    const CAP = 3;
    let live: LiveApp;
    beforeAll(async () => {
      live = await startLiveApp(stack, { liveQuery: { maxSubscriptions: CAP } });
    }, 60_000);
    afterAll(() => live?.app.close());

    it('refuses past the cap naming the setting, keeps serving, and a freed slot works again', async () => {
      const alice = await connect(live, tokens.alice);
      const bob = await connect(live, tokens.bob);
      await alice.client.subscribeResource({ uri: 'parse://Order/count' });
      await alice.client.subscribeResource({ uri: 'parse://Order/samples' });
      await bob.client.subscribeResource({ uri: 'parse://Order/count' });
      await until(async () => (await subs()) === CAP);
      const service = live.app.get<LiveResourceSubscriptions>(PARSE_AGENT_LIVE_QUERY);
      expect(service.stats().subscriptions).toBe(CAP);

      // Bob's next one: refused for the node, the setting named, nothing opened for it.
      const query = 'parse://Order/query?keys=status';
      await expect(bob.client.subscribeResource({ uri: query })).rejects.toThrow(
        /liveQuery\.maxSubscriptions\b/,
      );
      // The same resource again is no new subscription: still answered (idempotent).
      await bob.client.subscribeResource({ uri: 'parse://Order/count' });
      expect(service.stats().subscriptions).toBe(CAP);
      expect(await subs()).toBe(CAP);

      // The process keeps serving: reads, tools and the subscriptions it holds.
      const read = await bob.client.readResource({ uri: 'parse://Order/count' });
      expect(JSON.parse(String((read.contents[0] as { text: string }).text))).toHaveProperty(
        'count',
      );
      const tools = await bob.client.listTools();
      expect(tools.tools.length).toBeGreaterThan(0);
      await createOrder(stack, 'globex');
      await until(() => bob.updates.length === 1, 3000);
      expect(alice.updates).toEqual([]);

      // Alice lets one go: bob's refused subscription now goes through and fires.
      await alice.client.unsubscribeResource({ uri: 'parse://Order/samples' });
      await until(async () => (await subs()) === CAP - 1);
      await bob.client.subscribeResource({ uri: query });
      await until(async () => (await subs()) === CAP);
      bob.updates.length = 0;
      await createOrder(stack, 'globex');
      await until(() => bob.updates.includes(query), 3000);
      // Alice's remaining count subscription still works; bob's tenant never reaches her (given
      // the debounce and a margin to arrive, had it leaked).
      await pause(400);
      expect(alice.updates).toEqual([]);
      await createOrder(stack, 'acme');
      await until(() => alice.updates.length === 1, 3000);
      expect(alice.updates).toEqual(['parse://Order/count']);

      await alice.transport.terminateSession();
      await bob.transport.terminateSession();
      await until(async () => (await subs()) === 0 && (await socks()) === 0);
      expect(service.stats()).toMatchObject({ sessions: 0, subscriptions: 0, connections: 0 });
    });
  });

  describe('a session that ends while its subscribe is being planned', () => {
    let live: LiveApp;
    beforeAll(async () => {
      live = await startLiveApp(stack, { liveQuery: { maxSubscriptions: 1 } });
    }, 60_000);
    afterAll(() => live?.app.close());

    it('records nothing for it and holds no slot of the cap', async () => {
      const service = live.app.get<LiveResourceSubscriptions>(PARSE_AGENT_LIVE_QUERY);
      const agent = live.app
        .get(ParseAgentFactory)
        .create({ sessionToken: tokens.alice, tenantId: 'acme' });
      const ended$ = new Subject<void>();
      const session = { id: 'ends-while-planning', ended$ };
      // The plan asks Parse Server (schema, CLP) before anything is recorded: the session ends
      // meanwhile, as a DELETE or an idle expiry would end it.
      const subscribing = service.subscribe(
        agent,
        session,
        parseResourceUri('parse://Order/count'),
      );
      ended$.next();
      ended$.complete();
      await expect(subscribing).rejects.toThrow(/session ended/);
      expect(service.stats()).toMatchObject({ sessions: 0, subscriptions: 0 });
      expect(await subs()).toBe(0);

      // The only slot is free: a live session's subscribe goes through and fires.
      const alice = await connect(live, tokens.alice);
      await alice.client.subscribeResource({ uri: 'parse://Order/count' });
      await until(async () => (await subs()) === 1);
      await createOrder(stack, 'acme');
      await until(() => alice.updates.length === 1, 3000);
      await alice.transport.terminateSession();
      await until(async () => (await subs()) === 0 && (await socks()) === 0);
    }, 30_000);
  });

  (redisServerInstalled() ? describe : describe.skip)(
    'an unsubscribe while Redis does not answer',
    () => {
      let redis: OwnRedis;
      let live: LiveApp;
      beforeAll(async () => {
        redis = await startOwnRedis();
        live = await startLiveApp(stack, {
          redis: { url: redis.url, keyPrefix: runKeyPrefix('live-bounds') },
        });
      }, 60_000);
      afterAll(async () => {
        await redis?.start().catch(() => undefined);
        await live?.app.close();
        await redis?.stop();
      });

      it('reports the store error, and the subscription stops on this node all the same', async () => {
        const alice = await connect(live, tokens.alice);
        const uri = 'parse://Order/count';
        await alice.client.subscribeResource({ uri });
        await until(async () => (await subs()) === 1);
        const service = live.app.get<LiveResourceSubscriptions>(PARSE_AGENT_LIVE_QUERY);
        const sessionId = alice.transport.sessionId!;
        expect(service.subscriptionsOf(sessionId)).toEqual([uri]);

        // Redis goes between the session check and the unsubscribe (called on the service: over
        // HTTP the session lookup would refuse first).
        await redis.stop();
        await expect(
          service.unsubscribe({ id: sessionId, ended$: new Subject<void>() }, uri),
        ).rejects.toThrow(/Redis[\s\S]*does not answer/);
        expect(service.subscriptionsOf(sessionId)).toEqual([]);
        await until(async () => (await subs()) === 0);
        await createOrder(stack, 'acme');
        await pause(400);
        expect(alice.updates).toEqual([]);
      }, 30_000);
    },
  );

  describe('session expiry (mcp.sessionIdleTimeoutMs)', () => {
    const IDLE_MS = 2000;
    let live: LiveApp;
    beforeAll(async () => {
      live = await startLiveApp(stack, { mcp: { sessionIdleTimeoutMs: IDLE_MS } });
    }, 60_000);
    afterAll(() => live?.app.close());

    it('an idle session ends with its subscriptions: the LiveQuery server holds none of them', async () => {
      const alice = await connect(live, tokens.alice);
      const bob = await connect(live, tokens.bob);
      await alice.client.subscribeResource({ uri: 'parse://Order/count' });
      await alice.client.subscribeResource({ uri: 'parse://Order/samples' });
      await until(async () => (await subs()) === 2);
      const service = live.app.get<LiveResourceSubscriptions>(PARSE_AGENT_LIVE_QUERY);
      const aliceSession = alice.transport.sessionId!;
      expect(service.subscriptionsOf(aliceSession)).toHaveLength(2);

      // Bob stays busy; alice sends nothing (her GET stream stays open) and her session expires.
      const busy = setInterval(() => void bob.client.ping().catch(() => undefined), 250);
      try {
        await until(async () => (await subs()) === 0, IDLE_MS * 4);
        expect(service.subscriptionsOf(aliceSession)).toEqual([]);
        // The socket closes after its last unsubscribe is answered: it goes, a moment later.
        await until(async () => (await socks(tokens.alice)) === 0);
        // A write now reaches no one, and the expired session is gone for good (404).
        await createOrder(stack, 'acme');
        await pause(400);
        expect(alice.updates).toEqual([]);
        await expect(
          alice.client.subscribeResource({ uri: 'parse://Order/count' }),
        ).rejects.toThrow();
        expect(await subs()).toBe(0);
        // Bob's session, in use all along, is still served.
        await bob.client.subscribeResource({ uri: 'parse://Order/count' });
        await until(async () => (await subs()) === 1);
        await createOrder(stack, 'globex');
        await until(() => bob.updates.length === 1, 3000);
      } finally {
        clearInterval(busy);
      }
      await bob.transport.terminateSession();
      await until(async () => (await subs()) === 0 && (await socks()) === 0);
    }, 30_000);
  });
});
