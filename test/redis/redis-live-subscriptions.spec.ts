import { RedisConnection } from 'nestjs-parse-agent/redis/redis-connection';
import {
  liveSubscriptionsKey,
  RedisLiveSubscriptions,
} from 'nestjs-parse-agent/redis/redis-live-subscriptions';
import { RedisSessionStore } from 'nestjs-parse-agent/redis/redis-session-store';
import { redisReachable, runKeyPrefix, SHARED_REDIS_URL } from './redis-nodes';

const available = redisReachable(SHARED_REDIS_URL);
if (!available) {
  console.warn(`SKIPPED Redis live subscriptions suite: no Redis at ${SHARED_REDIS_URL}.`);
}
const describeWithRedis = available ? describe : describe.skip;

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A session's subscribed URIs in Redis: the cap counted there, the set living exactly as long as
 * the session (its expiry refreshed with the session's, deleted with it), and a change announced
 * to the other nodes only.
 */
describeWithRedis('RedisLiveSubscriptions (real Redis)', () => {
  const IDLE_MS = 60_000;
  let a: RedisConnection;
  let b: RedisConnection;
  let store: RedisSessionStore;

  beforeAll(async () => {
    const keyPrefix = runKeyPrefix('live-subscriptions');
    a = RedisConnection.fromOptions({ url: SHARED_REDIS_URL, keyPrefix });
    b = RedisConnection.fromOptions({ url: SHARED_REDIS_URL, keyPrefix });
    await a.waitReady();
    await b.waitReady();
    store = new RedisSessionStore(a, { idleTimeoutMs: IDLE_MS });
    await store.start();
  });
  afterAll(async () => {
    store?.clear();
    await a?.close();
    await b?.close();
  });

  it('counts the cap in Redis, whichever node records, and refuses an ended session', async () => {
    const session = await store.create('alice');
    const onA = new RedisLiveSubscriptions(a);
    const onB = new RedisLiveSubscriptions(b);
    expect(await onA.add(session.id, 'parse://Order/count', 2)).toBe('added');
    expect(await onB.add(session.id, 'parse://Order/count', 2)).toBe('exists');
    expect(await onB.add(session.id, 'parse://Order/samples', 2)).toBe('added');
    expect(await onA.add(session.id, 'parse://Order/query?keys=status', 2)).toBe('full');
    expect((await onA.list(session.id)).sort()).toEqual([
      'parse://Order/count',
      'parse://Order/samples',
    ]);
    expect(await onB.remove(session.id, 'parse://Order/samples')).toBe(true);
    expect(await onB.remove(session.id, 'parse://Order/samples')).toBe(false);
    expect(await onA.add(session.id, 'parse://Order/query?keys=status', 2)).toBe('added');
    expect(await onA.add('x'.repeat(32), 'parse://Order/count', 2)).toBe('gone');
  });

  it('the set expires with the session, its expiry refreshed on use, and goes with DELETE', async () => {
    const session = await store.create('bob');
    const shared = new RedisLiveSubscriptions(a);
    await shared.add(session.id, 'parse://Order/count', 10);
    const key = liveSubscriptionsKey(a, session.id);
    const ttl = await a.client.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(IDLE_MS);
    // Shorten it, then use the session from another node: the refresh puts it back to the idle time.
    await a.client.pexpire(key, 5000);
    const other = new RedisSessionStore(b, { idleTimeoutMs: IDLE_MS });
    expect(await other.get(session.id, 'bob')).toBeDefined();
    expect(await a.client.pttl(key)).toBeGreaterThan(5000);
    other.clear();
    expect(await store.delete(session.id)).toBe(true);
    expect(await a.client.exists(key)).toBe(0);
  });

  it('announces a change to the other nodes, not to itself', async () => {
    const heardOnA: string[] = [];
    const heardOnB: string[] = [];
    const stopA = await new RedisLiveSubscriptions(a).watch((id) => heardOnA.push(id));
    const stopB = await new RedisLiveSubscriptions(b).watch((id) => heardOnB.push(id));
    // watch() waits for the SUBSCRIBE acknowledgement only a little: wait until Redis counts both
    // subscribers (a loaded machine may take longer than that).
    const channel = a.key('live-subscriptions', 'changed');
    await until(async () => {
      const [, count] = (await a.client.pubsub('NUMSUB', channel)) as [string, number];
      return Number(count) === 2;
    }, 'both nodes subscribed');
    await new RedisLiveSubscriptions(a).announce('session-1');
    await until(() => heardOnB.length > 0, 'B hearing A');
    // Redis delivers one connection's messages in order: once A hears B's later announce, A's own
    // earlier one would have arrived too, had it not been ignored. No fixed wait.
    await new RedisLiveSubscriptions(b).announce('session-2');
    await until(() => heardOnA.length > 0, 'A hearing B');
    expect(heardOnB).toEqual(['session-1']);
    expect(heardOnA).toEqual(['session-2']);
    stopA();
    stopB();
  });
});
