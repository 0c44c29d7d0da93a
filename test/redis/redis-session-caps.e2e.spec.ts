import type { SeededUser } from '../harness/fixtures';
import {
  floodOneUserWhileAnotherWorks,
  initialize,
  logInTimes,
  post,
  bearer,
  seedUsers,
} from '../mcp/session-caps.scenario';
import {
  redisReachable,
  runKeyPrefix,
  SHARED_REDIS_URL,
  startRedisNode,
  type RedisNode,
} from './redis-nodes';

const available = redisReachable(SHARED_REDIS_URL);
if (!available) {
  console.warn(`SKIPPED Redis session caps suite: no Redis at ${SHARED_REDIS_URL}.`);
}
const describeWithRedis = available ? describe : describe.skip;

describeWithRedis('MCP session caps on two nodes sharing Redis (real Parse logins)', () => {
  let alice: SeededUser;
  let bob: SeededUser;
  const nodes: RedisNode[] = [];

  beforeAll(async () => {
    ({ alice, bob } = await seedUsers());
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
  });

  async function pair(
    mcp: Parameters<typeof startRedisNode>[0]['mcp'],
  ): Promise<[RedisNode, RedisNode]> {
    const keyPrefix = runKeyPrefix('session-caps');
    // userKey undefined: users are resolved through Parse (/users/me), as in production.
    const options = { redisUrl: SHARED_REDIS_URL, keyPrefix, mcp: { userKey: undefined, ...mcp } };
    const a = await startRedisNode(options);
    const b = await startRedisNode(options);
    nodes.push(a, b);
    return [a, b];
  }

  it("one user's logins spread over both nodes cannot push another user's live session out", async () => {
    const [a, b] = await pair({ maxSessionsPerPrincipal: 4 });
    await floodOneUserWhileAnotherWorks({ urls: [a.url, b.url], cap: 4, alice, bob });
  });

  it('rate-limits initialize per user across nodes', async () => {
    const [a, b] = await pair({ initializeRateLimit: { limit: 2, windowSeconds: 60 } });
    const tokens = await logInTimes(alice, 3);
    expect((await post(a.url, initialize(), bearer(tokens[0]))).status).toBe(200);
    expect((await post(b.url, initialize(), bearer(tokens[1]))).status).toBe(200);
    const refused = await post(a.url, initialize(), bearer(tokens[2]));
    expect(refused.status).toBe(429);
    expect(refused.json?.error?.message).toMatch(/Too many initialize requests for this user/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await post(b.url, initialize(), bearer(bob.sessionToken))).status).toBe(200);
  });

  it('refuses a newcomer with 503 when all nodes together hold maxSessions', async () => {
    const [a, b] = await pair({ maxSessions: 2 });
    const bobInit = await post(a.url, initialize(), bearer(bob.sessionToken));
    const bobSession = bobInit.headers.get('mcp-session-id')!;
    expect((await post(b.url, initialize(), bearer(alice.sessionToken))).status).toBe(200);
    const [token] = await logInTimes(alice, 1);
    const full = await post(b.url, initialize(), bearer(token));
    expect(full.status).toBe(503);
    expect(full.json?.error?.message).toMatch(/maximum of 2 open MCP sessions/);
    const listed = await post(
      b.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      {
        ...bearer(bob.sessionToken),
        'Mcp-Session-Id': bobSession,
        'MCP-Protocol-Version': '2025-06-18',
      },
    );
    expect(listed.status).toBe(200);
  });
});
