import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PolicedToolContext } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { randomBytes } from 'node:crypto';
import { delay } from '../mcp/mcp-test-app';
import {
  initializeBody,
  redisReachable,
  redisServerInstalled,
  rpc,
  runKeyPrefix,
  SHARED_REDIS_URL,
  startOwnRedis,
  startRedisNode,
  startRoundRobinProxy,
  type OwnRedis,
  type RedisNode,
} from './redis-nodes';

const sharedUp = redisReachable(SHARED_REDIS_URL);
const available = sharedUp || redisServerInstalled();
if (!available) {
  console.warn(
    `SKIPPED redis stateless suite: no Redis at ${SHARED_REDIS_URL} and no redis-server on PATH (set TEST_REDIS_URL or install redis-server).`,
  );
}
const describeWithRedis = available ? describe : describe.skip;

function addTools(node: RedisNode): void {
  node.tools.register({
    name: 'stateless_steps',
    description: 'Reports three steps, then answers.',
    clientSafe: true,
    handler: async (_args, ctx: PolicedToolContext) => {
      for (let step = 1; step <= 3; step++) {
        await delay(100);
        ctx.reportProgress({ progress: step, total: 3 });
      }
      return { done: true };
    },
  });
}

const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });

describeWithRedis('stateless serving (sessions: false) behind a round-robin proxy', () => {
  let a: RedisNode;
  let b: RedisNode;
  let ownRedis: OwnRedis | undefined;

  beforeAll(async () => {
    const keyPrefix = runKeyPrefix('stateless');
    if (!sharedUp) ownRedis = await startOwnRedis();
    const redisUrl = ownRedis?.url ?? SHARED_REDIS_URL;
    const mcp = { sessions: false, resumable: true, heartbeatIntervalMs: 10_000 };
    a = await startRedisNode({ redisUrl, keyPrefix, mcp });
    b = await startRedisNode({ redisUrl, keyPrefix, mcp });
    addTools(a);
    addTools(b);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await ownRedis?.stop();
  });

  it('issues no Mcp-Session-Id and ignores one a client sends', async () => {
    const init = await rpc(a.url, initializeBody(), bearer('r:stateless-1'));
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    const listed = await rpc(
      b.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { ...bearer('r:stateless-1'), 'Mcp-Session-Id': 'made-up-session-id' },
    );
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.json)).toContain('stateless_steps');
  });

  it('the official SDK client works with every request on the next node, a dropped stream included', async () => {
    const proxy = await startRoundRobinProxy([a.url, b.url], { cutCallStreamAfterEvents: 2 });
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url), {
      requestInit: { headers: bearer(`r:stateless:${randomBytes(4).toString('hex')}`) },
      reconnectionOptions: {
        initialReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 3,
      },
    });
    const client = new Client({ name: 'redis-stateless', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect(transport.sessionId).toBeUndefined();
      const progress: number[] = [];
      const first = await client.callTool({ name: 'stateless_steps', arguments: {} }, undefined, {
        onprogress: (p) => progress.push(p.progress),
        timeout: 10_000,
      });
      const content = first.content as Array<{ text: string }>;
      expect(JSON.parse(unwrapUntrusted(content[0].text))).toEqual({ done: true });
      expect(progress).toEqual([1, 2, 3]);
      for (let i = 0; i < 3; i++) {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain('stateless_steps');
      }
      expect(proxy.served[0]).toBeGreaterThan(1);
      expect(proxy.served[1]).toBeGreaterThan(1);
    } finally {
      await client.close().catch(() => undefined);
      await proxy.close();
    }
  });
});
