import { randomBytes } from 'node:crypto';
import { delay, messagesOf, openSsePost, progressOf, type SseEvent } from '../mcp/mcp-test-app';
import {
  initializeBody,
  killMidStreamAndResume,
  redisReachable,
  rpc,
  runKeyPrefix,
  SHARED_REDIS_URL,
  startNodeProcess,
  startRedisNode,
  type NodeProcess,
  type RedisNode,
} from './redis-nodes';

const available = redisReachable(SHARED_REDIS_URL);
if (!available) {
  console.warn(
    `SKIPPED redis node-death suite: no Redis at ${SHARED_REDIS_URL} (set TEST_REDIS_URL).`,
  );
}
const describeWithRedis = available ? describe : describe.skip;

const LEASE_MS = 1_000;
const mcp = { resumable: true, heartbeatIntervalMs: 300, callLeaseMs: LEASE_MS };
const token = () => `d:${randomBytes(6).toString('hex')}`;
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });

describeWithRedis('a streaming call whose node is killed (SIGKILL)', () => {
  let a: NodeProcess;
  let b: RedisNode;
  let keyPrefix: string;

  beforeAll(async () => {
    keyPrefix = runKeyPrefix('death');
    [a, b] = await Promise.all([
      startNodeProcess({ redisUrl: SHARED_REDIS_URL, keyPrefix, mcp }),
      startRedisNode({ redisUrl: SHARED_REDIS_URL, keyPrefix, mcp }),
    ]);
  }, 90_000);
  afterAll(async () => {
    await a?.kill();
    await b?.close();
  });

  it('the client resuming on another node gets the missed events once, then a clear error, never a hang', async () => {
    const who = token();
    const init = await rpc(b.url, initializeBody(), bearer(who));
    expect(init.status).toBe(200);
    const headers = {
      ...bearer(who),
      'Mcp-Session-Id': init.headers.get('mcp-session-id')!,
      'MCP-Protocol-Version': '2025-11-25',
    };
    const {
      before,
      after,
      lastEventId,
      elapsedMs: elapsed,
    } = await killMidStreamAndResume(a, b, headers);

    // Every step A stored, once and in order, across both connections.
    const steps = [...progressOf(before), ...progressOf(after)];
    expect(steps.length).toBeGreaterThan(2);
    expect(steps).toEqual(steps.map((_, i) => i + 1));
    // Then one answer: an error saying the node stopped, with the call's id.
    const answers = messagesOf(after).filter((m) => m.id === 41);
    expect(answers).toHaveLength(1);
    expect(answers[0].result).toBeUndefined();
    expect(answers[0].error).toMatchObject({ code: -32000 });
    expect(String(answers[0].error!.message)).toMatch(/node running this call stopped/);
    expect(messagesOf(after).at(-1)!.id).toBe(41);
    // Within about the lease, not the retention time.
    expect(elapsed).toBeLessThan(LEASE_MS * 4);

    // Resuming again gets the same stored answer (stored once), not a second one.
    const again = await openSsePost(
      b.url,
      undefined,
      { ...headers, 'Last-Event-ID': lastEventId },
      'GET',
    );
    const replayed = await again.rest();
    expect(progressOf(replayed)).toEqual(progressOf(after));
    const answerIds = (events: SseEvent[]) =>
      events.filter((e) => e.data && JSON.parse(e.data).id === 41).map((e) => e.id);
    expect(answerIds(replayed)).toEqual(answerIds(after));
  }, 60_000);

  it('a call still running on a live node is not declared dead while it is quiet', async () => {
    // B runs the call and stays alive; the lease is renewed by B, so a resume on B itself ends
    // with the tool's progress, not with an error, even after several lease periods.
    const who = token();
    const init = await rpc(b.url, initializeBody(), bearer(who));
    const headers = {
      ...bearer(who),
      'Mcp-Session-Id': init.headers.get('mcp-session-id')!,
      'MCP-Protocol-Version': '2025-11-25',
    };
    b.tools.register({
      name: 'quiet_wait',
      description: 'Waits quietly, then answers.',
      clientSafe: true,
      handler: async () => {
        await delay(LEASE_MS * 3);
        return { done: true };
      },
    });
    const call = await openSsePost(
      b.url,
      { jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'quiet_wait' } },
      headers,
    );
    const first = await call.next();
    call.abort();
    const resumed = await openSsePost(
      b.url,
      undefined,
      { ...headers, 'Last-Event-ID': first!.id! },
      'GET',
    );
    const after = await resumed.rest();
    const answers = messagesOf(after).filter((m) => m.id === 42);
    expect(answers).toHaveLength(1);
    expect(answers[0].error).toBeUndefined();
    expect(answers[0].result).toBeDefined();
  }, 30_000);
});
