import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AgentUnauthorizedError } from 'nestjs-parse-agent';
import { randomBytes } from 'node:crypto';
import { redisReachable, runKeyPrefix, SHARED_REDIS_URL } from '../redis/redis-nodes';
import { startMcpTestApp, type McpTestApp } from './mcp-test-app';

const OPERATORS: Record<string, string> = {
  'key-of-one': 'operator-one',
  'key-of-two': 'operator-two',
};
const VERSION = '2025-06-18';

const redisUp = redisReachable(SHARED_REDIS_URL);
if (!redisUp) console.warn(`operator sessions on Redis: SKIPPED, no Redis at ${SHARED_REDIS_URL}`);

/**
 * Two operators, both master-key agents (and a third key the host's user key does not name), told apart only by the host's `mcp.userKey` (which key
 * they sent). Operator one opens a session with the official MCP SDK client; operator two, with
 * raw HTTP, names its Mcp-Session-Id on every kind of request and must get 404 each time, while
 * the session keeps working for its owner. The same on the in-memory and the Redis session store.
 */
describe.each([
  ['in-memory sessions', false],
  ['Redis sessions', true],
] as const)('operator sessions follow the host’s user key (%s)', (_label, withRedis) => {
  const run = withRedis && !redisUp ? it.skip : it;
  let app: McpTestApp;
  let one: Client;
  let transport: StreamableHTTPClientTransport;
  let sessionId: string;

  beforeAll(async () => {
    if (withRedis && !redisUp) return;
    app = await startMcpTestApp({
      // The operator key picks the operator; both act with the master key.
      agentFactory: (req) => {
        const key = String(req.headers['x-mcp-api-key']);
        if (!OPERATORS[key] && key !== 'key-without-name')
          throw new AgentUnauthorizedError('no operator key', { reason: 'no_key' });
        return { permissions: 'readonly' };
      },
      mcp: {
        userKey: (req) => OPERATORS[String(req.headers['x-mcp-api-key'])],
        initializeRateLimit: false,
      },
      module: withRedis
        ? { redis: { url: SHARED_REDIS_URL, keyPrefix: runKeyPrefix('operator-sessions') } }
        : {},
    });
    one = new Client({ name: 'operator-one', version: '1.0.0' });
    transport = new StreamableHTTPClientTransport(new URL(app.url), {
      requestInit: { headers: { 'X-MCP-API-Key': 'key-of-one' } },
    });
    await one.connect(transport);
    sessionId = transport.sessionId!;
    expect(sessionId).toBeTruthy();
  }, 60_000);
  afterAll(async () => {
    await one?.close().catch(() => undefined);
    await app?.close();
  });

  const as = (key: string | undefined, extra: Record<string, string> = {}) => ({
    ...(key ? { 'X-MCP-API-Key': key } : {}),
    'Mcp-Session-Id': sessionId,
    'MCP-Protocol-Version': VERSION,
    ...extra,
  });
  const post = (key: string | undefined, body: Record<string, unknown>) =>
    fetch(app.url, {
      method: 'POST',
      headers: as(key, {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      }),
      body: JSON.stringify(body),
    });

  run(
    'the owner uses the session; the other operator gets 404 for every request naming it',
    async () => {
      expect(
        (await post('key-of-one', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status,
      ).toBe(200);

      const list = await post('key-of-two', { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      expect(list.status).toBe(404);
      expect(await list.json()).toMatchObject({ id: 2, error: { message: /Session not found/ } });
      const call = await post('key-of-two', {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'get_all_schemas', arguments: {} },
      });
      expect(call.status).toBe(404);
      const stream = await fetch(app.url, {
        headers: as('key-of-two', { Accept: 'text/event-stream' }),
      });
      expect(stream.status).toBe(404);
      await stream.body?.cancel();
      const ended = await fetch(app.url, { method: 'DELETE', headers: as('key-of-two') });
      expect(ended.status).toBe(404);

      // Still operator one's, and still open: the refused DELETE ended nothing.
      const tools = await one.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('get_all_schemas');
    },
  );

  run('an operator key the user key does not name is another principal too', async () => {
    const list = await post('key-without-name', { jsonrpc: '2.0', id: 4, method: 'tools/list' });
    expect(list.status).toBe(404);
  });

  run('two operators open sessions of their own, each usable only by its owner', async () => {
    const init = await fetch(app.url, {
      method: 'POST',
      headers: {
        'X-MCP-API-Key': 'key-of-two',
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: VERSION,
          capabilities: {},
          clientInfo: { name: `two-${randomBytes(2).toString('hex')}`, version: '1' },
        },
      }),
    });
    expect(init.status).toBe(200);
    const twoSession = init.headers.get('mcp-session-id')!;
    expect(twoSession).not.toBe(sessionId);
    const listAs = (key: string, id: string) =>
      fetch(app.url, {
        method: 'POST',
        headers: {
          'X-MCP-API-Key': key,
          'Mcp-Session-Id': id,
          'MCP-Protocol-Version': VERSION,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
    expect((await listAs('key-of-two', twoSession)).status).toBe(200);
    expect((await listAs('key-of-one', twoSession)).status).toBe(404);
    expect((await listAs('key-of-one', sessionId)).status).toBe(200);
  });
});
