import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { randomBytes } from 'node:crypto';
import { delay, messagesOf, openSsePost, progressOf, type SseEvent } from '../mcp/mcp-test-app';
import {
  callBody,
  initializeBody,
  redisReachable,
  redisServerInstalled,
  registerSteppingTool,
  rpc,
  runKeyPrefix,
  SHARED_REDIS_URL,
  startOwnRedis,
  startRedisNode,
  startRoundRobinProxy,
  STEP_MS,
  STEPS,
  type OwnRedis,
  type RedisNode,
} from './redis-nodes';

const sharedUp = redisReachable(SHARED_REDIS_URL);
const available = sharedUp || redisServerInstalled();
if (!available) {
  console.warn(
    `SKIPPED redis resume suite: no Redis at ${SHARED_REDIS_URL} and no redis-server on PATH (set TEST_REDIS_URL or install redis-server).`,
  );
}
const describeWithRedis = available ? describe : describe.skip;

const token = (label: string) => `r:${label}:${randomBytes(6).toString('hex')}`;
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const protocol = { 'MCP-Protocol-Version': '2025-11-25' };

describeWithRedis('resumable streams across two nodes sharing Redis', () => {
  let a: RedisNode;
  let b: RedisNode;
  let ownRedis: OwnRedis | undefined;
  const runs = { started: 0, aborted: 0 };

  beforeAll(async () => {
    const keyPrefix = runKeyPrefix('resume');
    if (!sharedUp) ownRedis = await startOwnRedis();
    const redisUrl = ownRedis?.url ?? SHARED_REDIS_URL;
    // Heartbeats slower than the call, so the progress seen is the tool's own.
    const mcp = { resumable: true, heartbeatIntervalMs: 10_000 };
    a = await startRedisNode({ redisUrl, keyPrefix, mcp });
    b = await startRedisNode({ redisUrl, keyPrefix, mcp });
    registerSteppingTool(a, 'resume_steps', runs);
    registerSteppingTool(b, 'resume_steps', runs);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await ownRedis?.stop();
  });

  async function openSession(who: string): Promise<string> {
    const init = await rpc(a.url, initializeBody(), bearer(who));
    expect(init.status).toBe(200);
    return init.headers.get('mcp-session-id')!;
  }

  /** Starts the slow call on A and drops the connection after the second step's event. */
  async function callAndDrop(who: string, session: string, id: number) {
    const body = {
      ...callBody(id, 'resume_steps'),
      params: { name: 'resume_steps', arguments: {}, _meta: { progressToken: `p${id}` } },
    };
    const headers = { ...bearer(who), 'Mcp-Session-Id': session, ...protocol };
    const stream = await openSsePost(a.url, body, headers);
    expect(stream.status).toBe(200);
    const before: SseEvent[] = [];
    for (let event = await stream.next(); event; event = await stream.next()) {
      before.push(event);
      if (progressOf(before).length === 2) break;
    }
    stream.abort();
    return { before, headers };
  }

  it('a client that lost its stream on A gets the rest and the result exactly once from B', async () => {
    const alice = token('alice');
    const session = await openSession(alice);
    const startedBefore = runs.started;
    const abortedBefore = runs.aborted;
    const { before, headers } = await callAndDrop(alice, session, 11);

    // The first event is the priming event: an id and no data.
    expect(before[0].id).toBeDefined();
    expect(before[0].data ?? '').toBe('');
    expect(before.filter((e) => e.data).every((e) => e.id)).toBe(true);
    const lastEventId = [...before].reverse().find((e) => e.id)!.id!;

    await delay(STEP_MS); // the call runs on while nobody listens
    const resumed = await openSsePost(
      b.url,
      undefined,
      { ...headers, 'Last-Event-ID': lastEventId },
      'GET',
    );
    expect(resumed.status).toBe(200);
    const after = await resumed.rest(); // ends by itself after the response

    const seen = [...progressOf(before), ...progressOf(after)];
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]); // every step once, in order, none repeated
    const responses = messagesOf(after).filter((m) => m.id === 11);
    expect(responses).toHaveLength(1);
    const text = unwrapUntrusted(responses[0].result!.content![0].text);
    expect(JSON.parse(text)).toEqual({ steps: STEPS });
    expect(messagesOf(before).some((m) => m.id === 11)).toBe(false);
    // Event ids keep increasing across the two connections; none is sent twice.
    const ids = [...before, ...after].map((e) => e.id).filter(Boolean);
    expect(new Set(ids).size).toBe(ids.length);
    // The call ran once and the lost connection did not cancel it.
    expect(runs.started).toBe(startedBefore + 1);
    expect(runs.aborted).toBe(abortedBefore);
  });

  it('resuming after the call finished replays what was missed, on either node', async () => {
    const bob = token('bob');
    const session = await openSession(bob);
    const { before, headers } = await callAndDrop(bob, session, 12);
    const lastEventId = [...before].reverse().find((e) => e.id)!.id!;
    await delay(STEP_MS * (STEPS + 2));
    for (const node of [a, b]) {
      const resumed = await openSsePost(
        node.url,
        undefined,
        { ...headers, 'Last-Event-ID': lastEventId },
        'GET',
      );
      const after = await resumed.rest();
      expect(progressOf(after)).toEqual([3, 4, 5, 6]);
      expect(messagesOf(after).filter((m) => m.id === 12)).toHaveLength(1);
    }
  });

  it("refuses another principal's, a forged or an unknown event id with 404 and no events", async () => {
    const carol = token('carol');
    const session = await openSession(carol);
    const { before } = await callAndDrop(carol, session, 13);
    const lastEventId = [...before].reverse().find((e) => e.id)!.id!;
    const mallory = token('mallory');
    const attempts = [
      lastEventId, // carol's stream, presented by mallory
      `${lastEventId.split('.')[0]}.forgedforgedforgedforg_0-1`,
      'not-an-event-id',
    ];
    for (const id of attempts) {
      for (const node of [a, b]) {
        const res = await fetch(node.url, {
          headers: { ...bearer(mallory), Accept: 'text/event-stream', 'Last-Event-ID': id },
        });
        expect(res.status).toBe(404);
        const body = await res.text();
        expect(body).toMatch(/Event stream not found/);
        expect(body).not.toMatch(/progress|steps/);
      }
    }
  });

  it('the official SDK client resumes on the other node by itself when its stream drops', async () => {
    // Round robin: the call goes to one node, the SDK's resume GET to the other.
    const proxy = await startRoundRobinProxy([a.url, b.url], { cutCallStreamAfterEvents: 3 });
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url), {
      requestInit: { headers: bearer(token('dave')) },
      reconnectionOptions: {
        initialReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 3,
      },
    });
    const client = new Client({ name: 'redis-resume', version: '1.0.0' });
    const progress: number[] = [];
    const tokens: string[] = [];
    try {
      await client.connect(transport);
      const servedBefore = [...proxy.served];
      const result = await client.callTool({ name: 'resume_steps', arguments: {} }, undefined, {
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
      // The resume went through the proxy (a GET to the other node) with the last id it held.
      expect(proxy.served[0] + proxy.served[1]).toBeGreaterThan(
        servedBefore[0] + servedBefore[1] + 1,
      );
      expect(new Set(tokens).size).toBe(tokens.length);
    } finally {
      await client.close().catch(() => undefined);
      await proxy.close();
    }
  });
});
