import { SessionLimitError } from 'nestjs-parse-agent/stores';
import { RedisConnection } from 'nestjs-parse-agent/redis/redis-connection';
import { RedisSessionStore } from 'nestjs-parse-agent/redis/redis-session-store';
import { redisReachable, runKeyPrefix, SHARED_REDIS_URL } from './redis-nodes';

const available = redisReachable(SHARED_REDIS_URL);
if (!available) {
  console.warn(`SKIPPED Redis session store suite: no Redis at ${SHARED_REDIS_URL}.`);
}
const describeWithRedis = available ? describe : describe.skip;

async function refusal(promise: Promise<unknown>): Promise<SessionLimitError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SessionLimitError) return error;
    throw error;
  }
  throw new Error('expected a SessionLimitError');
}

describeWithRedis('RedisSessionStore caps (real Redis)', () => {
  const connections: RedisConnection[] = [];
  const stores: RedisSessionStore[] = [];

  async function store(options: {
    perUser: number;
    total?: number;
    idleTimeoutMs?: number;
    keyPrefix?: string;
  }): Promise<RedisSessionStore> {
    const redis = RedisConnection.fromOptions({
      url: SHARED_REDIS_URL,
      keyPrefix: options.keyPrefix ?? runKeyPrefix('session-store'),
    });
    await redis.waitReady();
    connections.push(redis);
    const s = new RedisSessionStore(redis, {
      idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
      maxSessionsPerPrincipal: options.perUser,
      maxSessions: options.total,
    });
    await s.start();
    stores.push(s);
    return s;
  }

  afterAll(async () => {
    for (const s of stores) s.clear();
    for (const c of connections) await c.close();
  });

  it("counts a user's sessions across tokens and refuses past the cap without ending anyone's", async () => {
    const s = await store({ perUser: 3 });
    const bob = await s.create('bob-token', { user: 'bob' });
    let bobEnded = false;
    bob.ended$.subscribe({ complete: () => (bobEnded = true) });
    const alice = [];
    for (let i = 0; i < 3; i++) alice.push(await s.create(`alice-${i}`, { user: 'alice' }));
    for (let i = 3; i < 20; i++) {
      const error = await refusal(s.create(`alice-${i}`, { user: 'alice' }));
      expect(error.scope).toBe('user');
      expect(error.limit).toBe(3);
      expect(error.retryAfter).toBeGreaterThan(55);
      expect(error.retryAfter).toBeLessThanOrEqual(60);
    }
    expect(await s.get(bob.id, 'bob-token')).toBeDefined();
    expect(bobEnded).toBe(false);
    for (const [i, session] of alice.entries()) {
      expect(await s.get(session.id, `alice-${i}`)).toBeDefined();
    }
    // Bound to the token that opened it: alice's other token cannot use it.
    expect(await s.get(alice[0].id, 'alice-1')).toBeUndefined();
    // DELETE frees a place for her.
    expect(await s.delete(alice[0].id)).toBe(true);
    expect((await s.create('alice-99', { user: 'alice' })).owner).toBe('alice-99');
    await expect(s.create('alice-100', { user: 'alice' })).rejects.toBeInstanceOf(
      SessionLimitError,
    );
  });

  it('enforces the cap atomically under concurrent creates from two nodes', async () => {
    const keyPrefix = runKeyPrefix('session-store-race');
    const one = await store({ perUser: 5, keyPrefix });
    const two = await store({ perUser: 5, keyPrefix });
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? one : two).create(`mallory-${i}`, { user: 'mallory' }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    for (const r of results) {
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(SessionLimitError);
    }
  });

  it('refuses past the total cap (503 scope) and never evicts; expiry frees places', async () => {
    const s = await store({ perUser: 10, total: 2, idleTimeoutMs: 600 });
    const a = await s.create('a', { user: 'ua' });
    const b = await s.create('b', { user: 'ub' });
    const full = await refusal(s.create('c', { user: 'uc' }));
    expect(full.scope).toBe('server');
    expect(full.limit).toBe(2);
    expect(full.message).toMatch(/maximum of 2 open MCP sessions/);
    expect(await s.get(a.id, 'a')).toBeDefined();
    expect(await s.get(b.id, 'b')).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await s.create('c', { user: 'uc' })).owner).toBe('c');
  });

  it('frees the place of an ended session in the user index and the total', async () => {
    const s = await store({ perUser: 1, total: 1 });
    const first = await s.create('t1', { user: 'u' });
    await expect(s.create('t2', { user: 'u' })).rejects.toBeInstanceOf(SessionLimitError);
    await s.delete(first.id);
    const second = await s.create('t2', { user: 'u' });
    expect(await s.get(second.id, 't2')).toBeDefined();
  });
});
