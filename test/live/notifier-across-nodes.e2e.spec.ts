import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { McpNotifier } from 'nestjs-parse-agent';
import { startRedisNode, type RedisNode } from '../redis/redis-nodes';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * McpNotifier on two nodes sharing the real Redis: a notification sent on the node that does not
 * hold the session's GET stream reaches it through the other node, and notify() says so; one for
 * a session nobody listens to says false. Official SDK client, made-up bearer tokens (no tool runs).
 */
describe('McpNotifier across two nodes on Redis', () => {
  const keyPrefix = `pa-test-notify-${randomBytes(4).toString('hex')}:`;
  let a: RedisNode;
  let b: RedisNode;
  let client: Client | undefined;

  beforeAll(async () => {
    a = await startRedisNode({ redisUrl: REDIS_URL, keyPrefix });
    b = await startRedisNode({ redisUrl: REDIS_URL, keyPrefix });
  }, 60_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await a?.close();
    await b?.close();
  });

  it('node B reaches the stream node A holds, and reports whether anyone received it', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(a.url), {
      requestInit: {
        headers: { Authorization: `Bearer r:notify-${randomBytes(6).toString('hex')}` },
      },
    });
    client = new Client({ name: 'notify-e2e', version: '1.0.0' });
    const heard: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      heard.push(n.params);
    });
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    // The SDK opens the GET stream after initialize: wait until node A holds it.
    const onA = a.app.get(McpNotifier);
    for (let i = 0; i < 100 && onA.listening === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(onA.listening).toBe(1);

    const params = { level: 'info', data: 'from node B' };
    const fromB = b.app.get(McpNotifier);
    expect(fromB.listening).toBe(0);
    expect(await fromB.notify(sessionId, 'notifications/message', params)).toBe(true);
    for (let i = 0; i < 50 && heard.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(heard).toEqual([params]);
    expect(await fromB.notify('nobody-listens', 'notifications/message', params)).toBe(false);
    await expect(fromB.notify(sessionId, 'ping', {})).rejects.toThrow(/notifications only/);
    expect(heard).toEqual([params]);
  });
});
