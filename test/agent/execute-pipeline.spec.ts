import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AgentCancelledError,
  type ParseAgent,
  type RateLimiter,
  type ToolEnvelope,
} from 'nestjs-parse-agent';
import { SlidingWindowRateLimiter } from 'nestjs-parse-agent/stores';
import { ParseRestClient } from 'nestjs-parse-agent/data/parse-rest/parse-rest-client';
import { CORE_MODELS } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { createObject } from '../harness/fixtures';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );
}

describe('execute(): rate limit, validation, timeout, cancellation, progress', () => {
  let bed: AgentTestBed;
  let master: ParseAgent;

  beforeAll(async () => {
    bed = await createAgentTestBed(CORE_MODELS);
    bed.metadata.unhide('PipelineProbe');
    master = bed.factory.create();
    await createObject('PipelineProbe', { n: 1 });
  });
  afterEach(() => bed.tools.reset());
  afterAll(() => bed.close());

  it('refuses calls over the sliding window with retry_after, and lets them through later', async () => {
    let now = 1_000_000;
    const limiter = new SlidingWindowRateLimiter(2, 10, () => now);
    const agent = bed.factory.create({ rateLimiter: limiter });
    expect((await agent.execute('list_tools')).success).toBe(true);
    expect((await agent.execute('list_tools')).success).toBe(true);
    const third = (await agent.execute('list_tools')) as Extract<ToolEnvelope, { success: false }>;
    expect(third).toMatchObject({ success: false, error_code: 'rate_limited', retry_after: 10 });
    now += 10_001;
    expect((await agent.execute('list_tools')).success).toBe(true);
  });

  it('fails closed with a randomized retry_after when the limiter itself breaks', async () => {
    const broken: RateLimiter = {
      check() {
        throw new Error('redis is down');
      },
    };
    const warnings: string[] = [];
    const agent = bed.factory.create({ rateLimiter: broken });
    (agent as unknown as { services: { warn: (m: string) => void } }).services.warn = (m) =>
      warnings.push(m);
    const res = (await agent.execute('list_tools')) as Extract<ToolEnvelope, { success: false }>;
    expect(res.error_code).toBe('rate_limited');
    expect(res.retry_after).toBeGreaterThanOrEqual(1);
    expect(res.retry_after).toBeLessThanOrEqual(5);
    expect(res.error).not.toContain('redis');
    expect(warnings.join()).toContain('redis is down');
  });

  it('validates arguments against the tool schema before running it', async () => {
    const missing = await master.execute('query_class', {});
    expect(missing).toMatchObject({
      success: false,
      error_code: 'invalid_argument',
      error: 'Invalid arguments: class_name is required',
    });
    const wrongType = await master.execute('query_class', {
      class_name: 'PipelineProbe',
      limit: 'ten',
    });
    expect(wrongType).toMatchObject({ success: false, error_code: 'invalid_argument' });
    const notObject = await master.execute(
      'query_class',
      'x' as unknown as Record<string, unknown>,
    );
    expect(notObject).toMatchObject({ success: false, error_code: 'invalid_argument' });
  });

  it('times a tool out through its AbortSignal', async () => {
    let aborted = false;
    bed.tools.register({
      name: 'slow_probe',
      description: 'Waits until aborted.',
      timeout: 1,
      handler: async (_args, { signal }) => {
        signal.addEventListener('abort', () => (aborted = true));
        await waitForAbort(signal);
      },
    });
    const started = Date.now();
    const res = await master.execute('slow_probe');
    expect(res).toMatchObject({ success: false, error_code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(aborted).toBe(true);
  });

  it('cancels through the call signal and through agent.cancel()', async () => {
    bed.tools.register({
      name: 'wait_probe',
      description: 'Waits until aborted.',
      handler: async (_args, { signal }) => waitForAbort(signal),
    });
    const controller = new AbortController();
    const pending = master.execute('wait_probe', {}, { signal: controller.signal });
    await sleep(50);
    controller.abort(new AgentCancelledError('notifications_cancelled'));
    expect(await pending).toEqual({
      success: false,
      error: 'Cancelled by client (notifications_cancelled)',
      error_code: 'cancelled',
      cancelled: true,
    });
    const agent = bed.factory.create();
    const second = agent.execute('wait_probe');
    await sleep(20);
    agent.cancel('client_disconnect');
    expect(await second).toMatchObject({
      error_code: 'cancelled',
      error: 'Cancelled by client (client_disconnect)',
    });
    expect(agent.cancelled).toBe(true);
    expect(await agent.execute('list_tools')).toMatchObject({ error_code: 'cancelled' });
  });

  it('leaves no abort listener on long-lived signals once calls finish', async () => {
    const shared = new AbortController();
    const agent = bed.factory.create();
    const own = agent.signal; // created before the calls: each call listens to it while it runs
    for (let i = 0; i < 20; i++) {
      expect((await agent.execute('list_tools', {}, { signal: shared.signal })).success).toBe(true);
    }
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(own, 'abort')).toHaveLength(0);
    // A failing call cleans up too.
    const failed = await agent.execute(
      'query_class',
      { class_name: 42 },
      { signal: shared.signal },
    );
    expect(failed.success).toBe(false);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('forwards progress reported by the tool to the caller', async () => {
    bed.tools.register({
      name: 'progress_probe',
      description: 'Reports progress.',
      handler: async (_args, { reportProgress }) => {
        for (let i = 1; i <= 3; i++)
          reportProgress({ progress: i, total: 3, message: `step ${i}` });
        return { done: true };
      },
    });
    const seen: unknown[] = [];
    const res = await master.execute('progress_probe', {}, { onProgress: (p) => seen.push(p) });
    expect(res).toEqual({ success: true, data: { done: true } });
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('hides a throwing tool’s message behind internal_error', async () => {
    bed.tools.register({
      name: 'broken_probe',
      description: 'Throws.',
      handler: () => {
        throw new Error('secret connection string postgres://x');
      },
    });
    const agent = bed.factory.create();
    const logged: string[] = [];
    (agent as unknown as { services: { warn: (m: string) => void } }).services.warn = (m) =>
      logged.push(m);
    const res = await agent.execute('broken_probe');
    expect(res).toEqual({
      success: false,
      error: 'broken_probe failed: internal error',
      error_code: 'internal_error',
    });
    expect(logged.join()).toContain('secret connection string');
  });

  it('reports a dead Parse Server as a parse_error and keeps working', async () => {
    const dead = new ParseRestClient({
      serverURL: 'http://127.0.0.1:9/parse',
      appId: 'x',
      masterKey: 'y',
    });
    const err = await dead.find('X', {}, { masterKey: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ errorCode: 'parse_error' });
    expect((err as Error).message).toBe('Parse error: Parse Server is unreachable (ECONNREFUSED).');
    expect((err as Error).message).not.toContain('127.0.0.1');
    expect((await master.execute('count_objects', { class_name: 'PipelineProbe' })).success).toBe(
      true,
    );
  });
});

describe('ParseRestClient aborts its in-flight HTTP request', () => {
  let server: Server;
  let closedByClient: Promise<void>;

  beforeAll(async () => {
    let markClosed!: () => void;
    closedByClient = new Promise((r) => (markClosed = r));
    // A slow HTTP endpoint standing in for a Parse query that takes long: it never answers, and
    // records when the client tears the connection down.
    server = createServer((req) => {
      req.on('close', () => markClosed());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('closes the socket when the signal aborts', async () => {
    const { port } = server.address() as AddressInfo;
    const client = new ParseRestClient({
      serverURL: `http://127.0.0.1:${port}/parse`,
      appId: 'a',
      masterKey: 'm',
    });
    const controller = new AbortController();
    const pending = client
      .find('Slow', {}, { masterKey: true }, controller.signal)
      .catch((e: unknown) => e);
    await sleep(100);
    controller.abort(new AgentCancelledError('client_disconnect'));
    const error = await pending;
    expect(error).toBeInstanceOf(AgentCancelledError);
    await expect(
      Promise.race([closedByClient.then(() => 'closed'), sleep(2000).then(() => 'still open')]),
    ).resolves.toBe('closed');
  });
});
