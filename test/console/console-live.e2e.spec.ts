import { randomBytes } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ParseAgentAuthGuard, ParseAgentConsoleModule } from 'nestjs-parse-agent';
import type { LiveResourceSubscriptions } from 'nestjs-parse-agent/live/live-resource-subscriptions';
import { PARSE_AGENT_LIVE_QUERY } from 'nestjs-parse-agent/nest/live-query.host';
import {
  ConsoleLive,
  MAX_LIVE_STREAMS_PER_CALLER,
} from 'nestjs-parse-agent/nest/console/console-live';
import type {
  McpSession,
  SessionCreateOptions,
  SessionStore,
} from 'nestjs-parse-agent/ports/session-store';
import { InMemorySessionStore } from 'nestjs-parse-agent/stores';
import { UserKeys } from 'nestjs-parse-agent/transport/shared/user-key';
import type { Browser, Page } from 'playwright-core';
import { seedDemo } from '../harness/demo-data';
import { describeWithChromium, launchChromium, openConsolePage, signInAs } from './console-browser';
import {
  createOrder,
  pause,
  softDeleteOrder,
  startLiveApp,
  until,
  type LiveApp,
} from '../live/live-app';
import { startLiveQueryStack, type LiveQueryStack } from '../live/live-query-stack';
import { SHARED_REDIS_URL } from '../redis/redis-nodes';

/** CONSOLE_SCREENSHOTS=1 refreshes docs/images/console-live.png (kept out of normal runs). */
const SCREENSHOT =
  process.env.CONSOLE_SCREENSHOTS === '1'
    ? join(__dirname, '..', '..', 'docs', 'images', 'console-live.png')
    : undefined;

const describeWithBrowser = describeWithChromium('console live e2e');

const REDIS_URL = SHARED_REDIS_URL;

/**
 * The in-memory store behind a slow network: each session takes 300 ms to open (a Redis store
 * across a busy link), so a page can leave while its session is being opened.
 */
class SlowSessionStore implements SessionStore {
  readonly inner = new InMemorySessionStore(60_000, 1000);
  /** Sessions asked for so far. */
  opening = 0;
  async create(owner: string, options?: SessionCreateOptions): Promise<McpSession> {
    this.opening++;
    await pause(300);
    return this.inner.create(owner, options);
  }
  get(id: string, owner: string) {
    return this.inner.get(id, owner);
  }
  delete(id: string) {
    return this.inner.delete(id);
  }
  clear() {
    return this.inner.clear();
  }
}

const consoleModule = () =>
  ParseAgentConsoleModule.forRoot({ path: '/console', guards: [ParseAgentAuthGuard] });

/**
 * The console's live count in headless chromium (playwright-core): the signed-in identity's count
 * of a class, fed by a real resource subscription on a real Parse LiveQuery server, updating when
 * rows change through /parse. Alice (acme) sees acme's changes and never globex's; without the
 * `liveQuery` option the panel does not show.
 */
describeWithBrowser('console live count in a real browser (Parse LiveQuery, chromium)', () => {
  let stack: LiveQueryStack;
  let live: LiveApp;
  let plain: LiveApp;
  /** A console whose MCP sessions idle out after 1.5 s. */
  let brief: LiveApp;
  /** Sessions in Redis: a live count's session must be one the store knows. */
  let shared: LiveApp;
  const sharedPrefix = `console-live-${randomBytes(4).toString('hex')}:`;
  /** No MCP endpoint, with redis: the console alone, its sessions in this process. */
  let consoleOnly: LiveApp;
  /** Sessions that take a while to open. */
  let slow: LiveApp;
  const slowStore = new SlowSessionStore();
  let browser: Browser;
  let tokens: { alice: string; carol: string };

  beforeAll(async () => {
    const seeded = await seedDemo();
    tokens = { alice: seeded.alice, carol: seeded.carol };
    stack = await startLiveQueryStack(['Order']);
    live = await startLiveApp(stack, { imports: [consoleModule()] });
    plain = await startLiveApp(stack, { liveQuery: null, imports: [consoleModule()] });
    brief = await startLiveApp(stack, {
      mcp: { sessionIdleTimeoutMs: 1500 },
      imports: [consoleModule()],
    });
    shared = await startLiveApp(stack, {
      redis: { url: REDIS_URL, keyPrefix: sharedPrefix },
      // The host names callers without their Parse user id: the agent's session token is all
      // that tells them apart, and it must not become a key.
      imports: [
        ParseAgentConsoleModule.forRoot({
          path: '/console',
          guards: [ParseAgentAuthGuard],
          callerOf: () => ({ kind: 'user', label: 'someone' }),
        }),
      ],
    });
    consoleOnly = await startLiveApp(stack, {
      mcp: null,
      redis: { url: REDIS_URL, keyPrefix: `console-only-${randomBytes(4).toString('hex')}:` },
      imports: [consoleModule()],
    });
    slow = await startLiveApp(stack, { sessionStore: slowStore, imports: [consoleModule()] });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await live?.app.close();
    await plain?.app.close();
    await brief?.app.close();
    await shared?.app.close();
    await consoleOnly?.app.close();
    await slow?.app.close();
    await stack?.stop();
  });

  async function openConsole(app: LiveApp, username: string): Promise<Page> {
    const page = await openConsolePage(browser, app.origin);
    await signInAs(page, username);
    return page;
  }

  /** What Parse REST counts for this session: the oracle for the number on the page. */
  async function restCount(sessionToken: string): Promise<number> {
    const where = encodeURIComponent(JSON.stringify({ isDeleted: { $ne: true } }));
    const res = await fetch(`${stack.serverURL}/classes/Order?count=1&limit=0&where=${where}`, {
      headers: {
        'X-Parse-Application-Id': stack.appId,
        'X-Parse-JavaScript-Key': stack.javascriptKey,
        'X-Parse-Session-Token': sessionToken,
      },
    });
    return ((await res.json()) as { count: number }).count;
  }

  const shown = async (page: Page) =>
    Number((await page.getByTestId('live-count').textContent())!.replace(/,/g, ''));
  const updates = async (page: Page) =>
    Number(await page.getByTestId('live-count').getAttribute('data-updates'));
  const subs = async () => (await stack.counts()).subscriptions;

  /** One live stream as a plain HTTP client holds it: the status, what came so far, hanging up. */
  const openStream = (app: LiveApp, token: string) =>
    new Promise<{ status: number; body(): string; close(): void }>((resolve, reject) => {
      const req = httpGet(
        `${app.origin}/console/api/live/Order`,
        { headers: { Authorization: `Bearer ${token}` } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          const settle = () =>
            resolve({ status: res.statusCode ?? 0, body: () => body, close: () => req.destroy() });
          // A refusal ends; a stream stays open, so it is handed over once its head arrived.
          if (res.statusCode === 200) settle();
          else res.on('end', settle);
        },
      );
      req.on('error', reject);
    });

  it('alice’s count changes when an acme order comes or goes, and never for a globex one', async () => {
    const page = await openConsole(live, 'alice');
    const panel = page.getByTestId('live-panel');
    await panel.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.getByTestId('live-class').locator('option').allTextContents()).toEqual([
      'Order',
    ]);
    await until(async () => (await updates(page)) === 1, 10_000);
    expect(await shown(page)).toBe(await restCount(tokens.alice));
    expect(await page.getByTestId('live-status').textContent()).toMatch(/alice may read · live/);
    // A real subscription on the LiveQuery server, on her own socket (the page's session token).
    await until(async () => (await subs()) === 1);
    const start = await shown(page);

    // Bob's tenant: no change, not even a re-read.
    await createOrder(stack, 'globex');
    await pause(800);
    expect(await updates(page)).toBe(1);
    expect(await shown(page)).toBe(start);

    // An acme order: the page shows one more, promptly.
    const before = Date.now();
    const order = await createOrder(stack, 'acme');
    await until(async () => (await shown(page)) === start + 1, 2000);
    expect(Date.now() - before).toBeLessThan(2000);
    if (SCREENSHOT) await page.locator('#live-panel').screenshot({ path: SCREENSHOT });

    // Carol (acme staff) soft-deletes it through /parse with her own session: one fewer.
    const res = await softDeleteOrder(stack, order.objectId, tokens.carol);
    expect(res.status).toBe(200);
    await until(async () => (await shown(page)) === start, 2000);
    expect(await shown(page)).toBe(await restCount(tokens.alice));

    // Closing the page ends the subscription on the LiveQuery server.
    await page.context().close();
    await until(async () => (await subs()) === 0 && (await stack.counts()).sockets === 0, 5000);
  }, 60_000);

  it('follows the active identity: with bob active, the count is globex’s', async () => {
    const page = await openConsole(live, 'alice');
    await until(async () => (await updates(page)) >= 1, 10_000);
    const alice = await shown(page);
    // bob signs in beside her and becomes active: his count, his tenant.
    await signInAs(page, 'bob');
    await until(
      async () => /bob may read/.test((await page.getByTestId('live-status').textContent()) ?? ''),
      10_000,
    );
    const bob = await shown(page);
    await createOrder(stack, 'acme');
    await pause(800);
    expect(await shown(page)).toBe(bob);
    await createOrder(stack, 'globex');
    await until(async () => (await shown(page)) === bob + 1, 2000);
    // Back to alice: her stream again, with the acme order she missed meanwhile.
    await page.getByTestId('identity-use').first().click();
    await until(async () => (await shown(page)) === alice + 1, 10_000);
    // Only the active identity's subscription runs.
    await until(async () => (await subs()) === 1);
    await page.context().close();
    await until(async () => (await subs()) === 0);
  }, 60_000);

  it('without the liveQuery option the panel stays hidden and the API says so', async () => {
    const page = await openConsole(plain, 'alice');
    // The page asked and was told no; the policy view is up, the live panel is not.
    await page.getByTestId('policy-column').first().waitFor();
    await pause(500);
    expect(await page.getByTestId('live-panel').isHidden()).toBe(true);
    const info = await page.evaluate(async (token) => {
      const res = await fetch('api/live', { headers: { Authorization: `Bearer ${token}` } });
      return res.json() as Promise<unknown>;
    }, tokens.alice);
    expect(info).toEqual({ available: false, class_names: [] });
    const refused = await page.evaluate(async (token) => {
      const res = await fetch('api/live/Order', { headers: { Authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as { message: string } };
    }, tokens.alice);
    expect(refused.status).toBe(404);
    expect(refused.body.message).toMatch(/liveQuery option/);
    await page.context().close();
  }, 60_000);

  it('bounds the live counts one identity watches at once, and a closed one frees its place', async () => {
    const open = (token: string) => openStream(live, token);
    const streams = [];
    for (let i = 0; i < MAX_LIVE_STREAMS_PER_CALLER; i++) streams.push(await open(tokens.alice));
    expect(streams.map((s) => s.status)).toEqual(Array(MAX_LIVE_STREAMS_PER_CALLER).fill(200));
    await until(async () => (await subs()) === MAX_LIVE_STREAMS_PER_CALLER);
    const refused = await open(tokens.alice);
    expect(refused.status).toBe(429);
    expect(refused.body()).toMatch(/already watches 8 live counts/);
    // Carol is someone else: her place is her own.
    const carol = await open(tokens.carol);
    expect(carol.status).toBe(200);
    await until(async () => (await subs()) === MAX_LIVE_STREAMS_PER_CALLER + 1);
    carol.close();
    // One of alice's closes: its subscription goes, and her next stream is served.
    streams.pop()!.close();
    await until(async () => (await subs()) === MAX_LIVE_STREAMS_PER_CALLER - 1);
    const again = await open(tokens.alice);
    expect(again.status).toBe(200);
    streams.push(again);
    for (const stream of streams) stream.close();
    await until(async () => (await subs()) === 0 && (await stack.counts()).sockets === 0, 5000);
  }, 60_000);

  it('a watched count outlives the MCP session idle time: the page keeps its session in use', async () => {
    const stream = await openStream(brief, tokens.alice);
    expect(stream.status).toBe(200);
    await until(async () => (await subs()) === 1);
    await until(() => (stream.body().match(/event: count/g) ?? []).length === 1, 5000);
    // Three idle times later the session is still there, and so is the subscription.
    await pause(4500);
    expect(await subs()).toBe(1);
    await createOrder(stack, 'acme');
    await until(() => (stream.body().match(/event: count/g) ?? []).length === 2, 3000);
    stream.close();
    await until(async () => (await subs()) === 0 && (await stack.counts()).sockets === 0, 5000);
  }, 30_000);

  it('works the same with sessions in Redis', async () => {
    const stream = await openStream(shared, tokens.alice);
    try {
      expect(stream.status).toBe(200);
      await until(async () => (await subs()) === 1);
      await until(() => (stream.body().match(/event: count/g) ?? []).length === 1, 5000);
      await createOrder(stack, 'globex');
      await pause(500);
      expect((stream.body().match(/event: count/g) ?? []).length).toBe(1);
      await createOrder(stack, 'acme');
      await until(() => (stream.body().match(/event: count/g) ?? []).length === 2, 3000);
    } finally {
      // Closed even when a step fails, so the tests after it start with no subscription.
      stream.close();
    }
    await until(async () => (await subs()) === 0 && (await stack.counts()).sockets === 0, 5000);
  }, 30_000);

  it('keeps no session token in Redis: the session counts against the hashed per-user key', async () => {
    const stream = await openStream(shared, tokens.alice);
    expect(stream.status).toBe(200);
    await until(async () => (await subs()) === 1);
    const inspect = new Redis(REDIS_URL);
    try {
      const keys = await inspect.keys(`${sharedPrefix}*`);
      const texts: string[] = [...keys];
      for (const key of keys) {
        const type = await inspect.type(key);
        if (type === 'hash') texts.push(...Object.entries(await inspect.hgetall(key)).flat());
        else if (type === 'set') texts.push(...(await inspect.smembers(key)));
        else if (type === 'zset') texts.push(...(await inspect.zrange(key, '0', '-1')));
        else if (type === 'string') texts.push((await inspect.get(key)) ?? '');
      }
      // The live count's session is there, counted against the key the MCP endpoint counts
      // alice's sessions by (one maxSessionsPerUser for both)...
      const me = await fetch(`${stack.serverURL}/users/me`, {
        headers: {
          'X-Parse-Application-Id': stack.appId,
          'X-Parse-JavaScript-Key': stack.javascriptKey,
          'X-Parse-Session-Token': tokens.alice,
        },
      });
      const { objectId } = (await me.json()) as { objectId: string };
      const user = UserKeys.ofHostKey(`parse-user:${objectId}`);
      expect(keys).toContain(`${sharedPrefix}sessions-of:${user}`);
      // ...and neither her token nor its "token:" key appear, in key names, fields or values.
      expect(texts.filter((text) => text.includes(tokens.alice))).toEqual([]);
      expect(texts.filter((text) => text.includes('token:'))).toEqual([]);
    } finally {
      inspect.disconnect();
    }
    stream.close();
    await until(async () => (await subs()) === 0 && (await stack.counts()).sockets === 0, 5000);
  }, 30_000);

  it('counts live streams per user and tenant: operators of two tenants have a bound each', async () => {
    const live$ = live.app.get(ConsoleLive);
    const operator = (tenantId?: string) => ({
      agentId: 'operator',
      permissions: 'readonly' as const,
      authType: 'master_key' as const,
      usingMasterKey: true,
      ...(tenantId ? { tenantId } : {}),
    });
    const acme = await live$.callerOf({ headers: {} }, operator('acme'));
    const globex = await live$.callerOf({ headers: {} }, operator('globex'));
    // One operator for the MCP per-user cap (as the endpoint counts it), two bounds of live counts.
    expect(acme.user).toBe(globex.user);
    expect(acme.slot).not.toBe(globex.slot);
    expect(await live$.callerOf({ headers: {} }, operator('acme'))).toEqual(acme);
    // Opaque: no tenant, no kind in clear.
    expect(`${acme.user}${acme.slot}`).not.toMatch(/acme|operator|master/);
  });

  it('a page that leaves while its session is being opened frees its place, subscription and session', async () => {
    const refusals: number[] = [];
    for (let i = 0; i < MAX_LIVE_STREAMS_PER_CALLER + 2; i++) {
      const asked = slowStore.opening;
      const req = httpGet(`${slow.origin}/console/api/live/Order`, {
        headers: { Authorization: `Bearer ${tokens.alice}` },
      });
      req.on('error', () => undefined);
      req.on('response', (res) => refusals.push(res.statusCode ?? 0));
      // The server is opening this request's session: the page goes.
      await until(() => slowStore.opening > asked || refusals.length > 0, 5000);
      expect(refusals).toEqual([]);
      req.destroy();
      // The open settles (300 ms) before the next page comes.
      await pause(400);
    }
    // Nothing subscribed, no session kept (the heartbeat would have kept it alive).
    await until(async () => slowStore.inner.size === 0 && (await subs()) === 0, 5000);
    await pause(300);
    expect(await subs()).toBe(0);
    expect(slowStore.inner.size).toBe(0);
    // Her place was freed each time: she still watches a count.
    const stream = await openStream(slow, tokens.alice);
    expect(stream.status).toBe(200);
    await until(() => (stream.body().match(/event: count/g) ?? []).length === 1, 5000);
    expect(slowStore.inner.size).toBe(1);
    stream.close();
    await until(async () => (await subs()) === 0 && slowStore.inner.size === 0, 5000);
  }, 30_000);

  it('works without an MCP endpoint when the redis option is set (the console alone)', async () => {
    const stream = await openStream(consoleOnly, tokens.alice);
    expect(stream.body()).not.toMatch(/session has ended/);
    expect(stream.status).toBe(200);
    await until(async () => (await subs()) === 1);
    await until(() => (stream.body().match(/event: count/g) ?? []).length === 1, 5000);
    await createOrder(stack, 'acme');
    await until(() => (stream.body().match(/event: count/g) ?? []).length === 2, 3000);
    stream.close();
    // This app lets go of its subscription and its socket at once...
    const service = consoleOnly.app.get<LiveResourceSubscriptions>(PARSE_AGENT_LIVE_QUERY);
    await until(() => service.stats().subscriptions === 0 && service.stats().connections === 0);
    // ...and the LiveQuery server drops them once the socket's close reaches it: on a loaded
    // machine (the full suite in band) that took over 5 s once, so it is given 15.
    await until(async () => (await subs()) === 0 && (await stack.counts()).sockets === 0, 15_000);
  }, 40_000);
});
