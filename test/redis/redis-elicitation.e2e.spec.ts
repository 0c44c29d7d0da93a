import { randomBytes } from 'node:crypto';
import { delay, messagesOf, openSsePost, type SseEvent } from '../mcp/mcp-test-app';
import {
  redisReachable,
  rpc,
  runKeyPrefix,
  SHARED_REDIS_URL,
  startRedisNode,
  type RedisNode,
  openSession as openSessionAt,
} from './redis-nodes';
import type { PolicedToolContext } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';

const available = redisReachable(SHARED_REDIS_URL);
if (!available) {
  console.warn(
    `SKIPPED redis elicitation suite: no Redis at ${SHARED_REDIS_URL} (set TEST_REDIS_URL).`,
  );
}
const describeWithRedis = available ? describe : describe.skip;

const token = () => `e:${randomBytes(6).toString('hex')}`;

type Stream = Awaited<ReturnType<typeof openSsePost>>;

const pendingNext = new WeakMap<Stream, Promise<SseEvent | undefined>>();

/**
 * The next event, or undefined when none arrives within `ms` (never waits unbounded). A read that
 * timed out stays pending and serves the next call, so no event is lost.
 */
async function nextWithin(stream: Stream, ms: number): Promise<SseEvent | undefined> {
  let next = pendingNext.get(stream);
  if (!next) {
    next = stream.next();
    pendingNext.set(stream, next);
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, ms, 'timeout')));
  try {
    const event = await Promise.race([next, timeout]);
    if (event === 'timeout') return undefined;
    pendingNext.delete(stream);
    return event;
  } finally {
    clearTimeout(timer);
  }
}

/** Reads until a message matching `match` arrives (within `ms` in all); undefined otherwise. */
async function waitFor(
  stream: Stream,
  match: (message: Record<string, unknown>) => boolean,
  ms: number,
): Promise<Record<string, unknown> | undefined> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const event = await nextWithin(stream, until - Date.now());
    if (!event) return undefined;
    const message = messagesOf([event])[0] as unknown as Record<string, unknown> | undefined;
    if (message && match(message)) return message;
  }
  return undefined;
}

describeWithRedis('confirmations (elicitation) across two nodes sharing Redis', () => {
  let a: RedisNode;
  let b: RedisNode;
  const answered: boolean[] = [];

  beforeAll(async () => {
    const keyPrefix = runKeyPrefix('elicit');
    const mcp = { heartbeatIntervalMs: 10_000 };
    a = await startRedisNode({ redisUrl: SHARED_REDIS_URL, keyPrefix, mcp });
    b = await startRedisNode({ redisUrl: SHARED_REDIS_URL, keyPrefix, mcp });
    for (const node of [a, b]) {
      node.tools.register({
        name: 'confirm_me',
        description: 'Asks the person to confirm, then says what they answered.',
        clientSafe: true,
        handler: async (_args, ctx: PolicedToolContext) => {
          const outcome = await ctx.confirm({
            message: 'Allow confirm_me?',
            tool: 'confirm_me',
            className: 'Thing',
          });
          answered.push(outcome.confirmed);
          return { confirmed: outcome.confirmed };
        },
      });
    }
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  const openSession = (node: RedisNode, who: string, elicitation: boolean) =>
    openSessionAt(node.url, who, { elicitation, client: 'elicit-suite' });

  const call = (node: RedisNode, headers: Record<string, string>, id: number) =>
    openSsePost(
      node.url,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'confirm_me', arguments: {} } },
      headers,
    );

  const answer = (node: RedisNode, headers: Record<string, string>, id: unknown, action: string) =>
    rpc(
      node.url,
      { jsonrpc: '2.0', id, result: { action, content: { confirm: action === 'accept' } } },
      headers,
    );

  const resultOf = (message: Record<string, unknown>) => {
    const result = message.result as { content: Array<{ text: string }>; isError?: boolean };
    return { isError: result.isError, text: unwrapUntrusted(result.content[0].text) };
  };

  it('an answer POSTed to the other node reaches the call waiting on the node that asked', async () => {
    const headers = await openSession(a, token(), true);
    const stream = await call(a, headers, 21);
    expect(stream.status).toBe(200);
    const question = await waitFor(stream, (m) => m.method === 'elicitation/create', 5000);
    expect(question).toBeDefined();
    const posted = await answer(b, headers, question!.id, 'accept');
    expect(posted.status).toBe(202);
    const response = await waitFor(stream, (m) => m.id === 21, 5000);
    expect(response).toBeDefined(); // before the fix: the call kept waiting
    expect(JSON.parse(resultOf(response!).text)).toEqual({ confirmed: true });
  });

  it('a call on a node that did not see initialize asks too, and a decline there refuses', async () => {
    const headers = await openSession(a, token(), true);
    const stream = await call(b, headers, 22);
    const question = await waitFor(stream, (m) => m.method === 'elicitation/create', 5000);
    expect(question).toBeDefined(); // before the fix: refused as "this client cannot ask"
    expect((await answer(a, headers, question!.id, 'decline')).status).toBe(202);
    const response = await waitFor(stream, (m) => m.id === 22, 5000);
    expect(response).toBeDefined();
    expect(resultOf(response!).isError).toBe(true);
    expect(resultOf(response!).text).toMatch(/did not confirm/);
  });

  it("another session's answer (other principal) never settles the question, on either node", async () => {
    const owner = await openSession(a, token(), true);
    const intruder = await openSession(b, token(), true);
    const done = answered.length;
    const stream = await call(a, owner, 23);
    const question = await waitFor(stream, (m) => m.method === 'elicitation/create', 5000);
    expect(question).toBeDefined();
    for (const node of [a, b]) {
      expect((await answer(node, intruder, question!.id, 'accept')).status).toBe(202);
    }
    await delay(300);
    expect(await waitFor(stream, (m) => m.id === 23, 300)).toBeUndefined();
    expect(answered.length).toBe(done); // still waiting
    // The owner's own answer, through the other node, still settles it.
    expect((await answer(b, owner, question!.id, 'decline')).status).toBe(202);
    const response = await waitFor(stream, (m) => m.id === 23, 5000);
    expect(resultOf(response!).isError).toBe(true);
  });

  it('a session whose client did not declare elicitation is never asked, on either node', async () => {
    const headers = await openSession(a, token(), false);
    for (const [node, id] of [
      [a, 24],
      [b, 25],
    ] as const) {
      const stream = await call(node, headers, id);
      const events = await stream.rest();
      expect(messagesOf(events).some((m) => m.method === 'elicitation/create')).toBe(false);
      const response = messagesOf(events).find((m) => m.id === id) as unknown as Record<
        string,
        unknown
      >;
      expect(resultOf(response).isError).toBe(true);
      expect(resultOf(response).text).toMatch(/cannot ask/);
    }
  });
});
