import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AgentDescription,
  bindAgentToPrincipal,
  ParseAgentAuthGuard,
  ParseAgentConsoleModule,
  ParseAgentModule,
  ParseClass,
  type RateLimiter,
} from 'nestjs-parse-agent';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { KeyedSlidingWindowRateLimiter } from 'nestjs-parse-agent/stores';
import request from 'supertest';
import { startCountingParseProxy, type CountingParseProxy } from '../harness/counting-parse-proxy';
import { testParseConnection } from '../harness/parse-rest';

const LIMIT = 5;
const BURST = 25;

@ParseClass('PreAuthNote')
@AgentDescription('A class for the console pre-auth suite.')
class PreAuthNote {}

/** The Parse client sends reads as POST with `_method: GET`; either way it is one round trip. */
let usersMe: () => number;

const randomToken = () => `r:${randomBytes(16).toString('hex')}`;

/**
 * The console's API, sign-in and sign-out behind the shipped guard, with the app's Parse traffic
 * going through a counting proxy in front of the real Parse Server: a burst of anonymous requests
 * with random tokens is cut off by the pre-auth limiter before the guard asks Parse about them.
 */
describe('console pre-auth limit (real Parse Server behind a counting proxy)', () => {
  let proxy: CountingParseProxy;
  let app: INestApplication | undefined;

  beforeAll(async () => {
    suppressSecurityBanners();
    proxy = await startCountingParseProxy(testParseConnection().serverURL);
    usersMe = () => proxy.count('GET', '/users/me') + proxy.count('POST', '/users/me');
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(() => proxy?.close());

  /** A fresh app, so each test starts with an untouched budget. */
  async function start(limiters: {
    mcp?: RateLimiter;
    console?: RateLimiter | false;
  }): Promise<INestApplication> {
    const module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: { ...testParseConnection(), serverURL: proxy.serverURL },
          models: [PreAuthNote],
          auth: { apiKey: 'console-pre-auth-operator-key' },
          agentFactory: bindAgentToPrincipal(),
          mcp: {
            path: '/mcp',
            guards: [ParseAgentAuthGuard],
            ...(limiters.mcp ? { preAuthRateLimiter: limiters.mcp } : {}),
          },
        }),
        ParseAgentConsoleModule.forRoot({
          path: '/console',
          guards: [ParseAgentAuthGuard],
          ...(limiters.console !== undefined ? { preAuthRateLimiter: limiters.console } : {}),
        }),
      ],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.init();
    proxy.reset();
    return app;
  }

  /** Anonymous requests with random tokens, one after the other; their statuses in order. */
  async function burst(
    target: INestApplication,
    send: (agent: ReturnType<typeof request>) => request.Test,
  ): Promise<Array<{ status: number; retryAfter?: string }>> {
    const answers: Array<{ status: number; retryAfter?: string }> = [];
    for (let i = 0; i < BURST; i++) {
      const res = await send(request(target.getHttpServer()));
      answers.push({ status: res.status, retryAfter: res.headers['retry-after'] });
    }
    return answers;
  }

  it('the API answers 429 past the MCP endpoint’s limit, and Parse hears no more than the limit', async () => {
    const target = await start({ mcp: new KeyedSlidingWindowRateLimiter(LIMIT, 60) });
    const answers = await burst(target, (http) =>
      http.get('/console/api/identity').set('Authorization', `Bearer ${randomToken()}`),
    );
    expect(answers.slice(0, LIMIT).map((a) => a.status)).toEqual(Array(LIMIT).fill(401));
    expect(answers.slice(LIMIT).map((a) => a.status)).toEqual(Array(BURST - LIMIT).fill(429));
    expect(answers.slice(LIMIT).every((a) => Number(a.retryAfter) >= 1)).toBe(true);
    expect(usersMe()).toBeGreaterThan(0);
    expect(usersMe()).toBeLessThanOrEqual(LIMIT);
  });

  it('sign-out and sign-in spend the same budget: no more /logout or /login than the limit', async () => {
    const target = await start({ mcp: new KeyedSlidingWindowRateLimiter(LIMIT, 60) });
    const signOuts = await burst(target, (http) =>
      http.post('/console/api/sign-out').set('Authorization', `Bearer ${randomToken()}`),
    );
    expect(signOuts.filter((a) => a.status === 429)).toHaveLength(BURST - LIMIT);
    expect(proxy.count('POST', '/logout')).toBeLessThanOrEqual(LIMIT);
    const signIns = await burst(target, (http) =>
      http
        .post('/console/api/sign-in')
        .send({ username: `nobody-${randomBytes(4).toString('hex')}`, password: 'wrong' }),
    );
    expect(signIns.every((a) => a.status === 429)).toBe(true);
    expect(proxy.count('POST', '/login')).toBe(0);
  });

  it('one budget per client address across the console and /mcp', async () => {
    const target = await start({ mcp: new KeyedSlidingWindowRateLimiter(LIMIT, 60) });
    await burst(target, (http) =>
      http.get('/console/api/tools').set('Authorization', `Bearer ${randomToken()}`),
    );
    const mcp = await request(target.getHttpServer())
      .post('/mcp')
      .set({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' })
      .set('Authorization', `Bearer ${randomToken()}`)
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(mcp.status).toBe(429);
  });

  it('takes a limiter of its own, or none with false', async () => {
    const own = await start({ console: new KeyedSlidingWindowRateLimiter(LIMIT, 60) });
    const limited = await burst(own, (http) =>
      http.get('/console/api/policy').set('Authorization', `Bearer ${randomToken()}`),
    );
    expect(limited.filter((a) => a.status === 429)).toHaveLength(BURST - LIMIT);
    expect(usersMe()).toBeLessThanOrEqual(LIMIT);
    await app!.close();

    const off = await start({ mcp: new KeyedSlidingWindowRateLimiter(LIMIT, 60), console: false });
    const open = await burst(off, (http) =>
      http.get('/console/api/identity').set('Authorization', `Bearer ${randomToken()}`),
    );
    expect(open.every((a) => a.status === 401)).toBe(true);
    expect(usersMe()).toBe(BURST);
  });
});
