import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ParseClass, ParseAgentModule, ParseRequestError } from 'nestjs-parse-agent';
import { ParseSessionVerifier, SessionCheckUnavailableError } from 'nestjs-parse-agent/auth';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { ParseRestClient } from 'nestjs-parse-agent/data/parse-rest/parse-rest-client';
import { SchemaCache } from 'nestjs-parse-agent/data/schema-cache';
import request from 'supertest';
import { defineClass } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';
import { SwitchableUpstream } from './switchable-upstream';

const TIMEOUT_MS = 400;

@ParseClass('FaultItem')
class FaultItem {}

/** Fault injection between the library and a real Parse Server: stalls, resets, recovery. */
describe('stalled or dead upstream (loopback front for the test Parse Server)', () => {
  let upstream: SwitchableUpstream;
  let parse: ReturnType<typeof testParseConnection>;

  beforeAll(async () => {
    const real = testParseConnection();
    const url = new URL(real.serverURL);
    upstream = new SwitchableUpstream({ host: url.hostname, port: Number(url.port) });
    const front = await upstream.start();
    parse = { ...real, serverURL: `http://${front}${url.pathname}` };
  });
  afterAll(() => upstream.stop());
  beforeEach(() => {
    upstream.mode = 'forward';
  });

  const elapsed = async <T>(work: () => Promise<T>) => {
    const started = Date.now();
    const outcome = await work().then(
      (value) => ({ value, error: undefined as unknown }),
      (error: unknown) => ({ value: undefined, error }),
    );
    return { ...outcome, ms: Date.now() - started };
  };

  it('a request to an upstream that accepts and never answers fails after the timeout and its socket is destroyed', async () => {
    const client = new ParseRestClient({ ...parse, requestTimeoutMs: TIMEOUT_MS });
    upstream.mode = 'stall';
    const before = upstream.open;
    const { error, ms } = await elapsed(() => client.schemas());
    expect(error).toBeInstanceOf(ParseRequestError);
    expect((error as Error).message).toBe(
      `Parse error: Parse Server did not answer within ${TIMEOUT_MS} ms.`,
    );
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(TIMEOUT_MS * 4);
    // The stalled connection was closed by the client, not kept for reuse.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(upstream.open).toBe(before);
    client.close();
  });

  it('an answer that arrives slowly but never pauses as long as the timeout is not cut off', async () => {
    const client = new ParseRestClient({ ...parse, requestTimeoutMs: TIMEOUT_MS });
    upstream.mode = 'trickle';
    upstream.trickleBytes = 128;
    upstream.trickleEveryMs = 100;
    // The schema list is a few KB: at 128 bytes per 100 ms it takes well over the timeout.
    const { value, error, ms } = await elapsed(() => client.schemas());
    expect(error).toBeUndefined();
    expect(value?.some((s) => s.className === '_User')).toBe(true);
    expect(ms).toBeGreaterThan(TIMEOUT_MS * 2);
    client.close();
  });

  it('the schema cache recovers once Parse answers again: a timed-out shared fetch is dropped', async () => {
    const client = new ParseRestClient({ ...parse, requestTimeoutMs: TIMEOUT_MS });
    const cache = new SchemaCache(client, 30_000);
    upstream.mode = 'stall';
    // Concurrent callers share the one fetch; all of them fail with it, none hangs.
    const stalled = await Promise.allSettled([cache.all(), cache.all(), cache.get('_User')]);
    expect(stalled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    upstream.mode = 'forward';
    const { value, ms } = await elapsed(() => cache.all());
    expect(value?.has('_User')).toBe(true);
    expect(ms).toBeLessThan(TIMEOUT_MS);
    client.close();
  });

  it("a caller's own signal stops its wait on a shared schema fetch without failing the others", async () => {
    const client = new ParseRestClient({ ...parse, requestTimeoutMs: 1500 });
    const cache = new SchemaCache(client, 30_000);
    upstream.mode = 'stall';
    const other = cache.all().then(
      () => 'ok',
      (error: Error) => error.message,
    );
    const { error, ms } = await elapsed(() => cache.all(AbortSignal.timeout(100)));
    expect(error).toBeDefined();
    expect(ms).toBeLessThan(1000);
    // The shared fetch ran on to its own timeout.
    expect(await other).toBe('Parse error: Parse Server did not answer within 1500 ms.');
    client.close();
  });

  it('after Parse was down (connections reset), the next calls succeed without a restart', async () => {
    const client = new ParseRestClient({ ...parse, requestTimeoutMs: TIMEOUT_MS });
    const cache = new SchemaCache(client, 30_000);
    upstream.mode = 'down';
    await expect(cache.all()).rejects.toThrow(/Parse Server is unreachable/);
    upstream.mode = 'forward';
    await expect(cache.all()).resolves.toBeInstanceOf(Map);
    client.close();
  });

  it('the shipped session check gives up after its timeout (503) instead of hanging', async () => {
    const client = new ParseRestClient({ ...parse });
    const verifier = new ParseSessionVerifier(client, { timeoutMs: TIMEOUT_MS });
    upstream.mode = 'stall';
    const { error, ms } = await elapsed(() => verifier.verify('r:some-session-token'));
    expect(error).toBeInstanceOf(SessionCheckUnavailableError);
    expect(ms).toBeLessThan(TIMEOUT_MS * 4);
    upstream.mode = 'forward';
    // An unknown token is a plain refusal once Parse answers (not a 503, not cached as one).
    await expect(verifier.verify('r:some-session-token')).resolves.toBeNull();
    client.close();
  });

  describe('over MCP', () => {
    let app: INestApplication;

    beforeAll(async () => {
      suppressSecurityBanners();
      await defineClass('FaultItem', { label: { type: 'String' } });
      const module = await Test.createTestingModule({
        imports: [
          ParseAgentModule.forRoot({
            parse: { ...parse, requestTimeoutMs: TIMEOUT_MS },
            models: [FaultItem],
            rateLimiter: { check: () => undefined },
            agentFactory: () => ({ permissions: 'readonly' }),
            mcp: { path: '/mcp' },
          }),
        ],
      }).compile();
      app = module.createNestApplication({ logger: false, forceCloseConnections: true });
      await app.listen(0, '127.0.0.1');
    });
    afterAll(() => app.close());

    const rpc = (id: number, method: string, params: Record<string, unknown>) =>
      request(app.getHttpServer())
        .post('/mcp')
        .set('Content-Type', 'application/json')
        .send({ jsonrpc: '2.0', id, method, params });

    it('a resources/read that times out upstream is a server error, not "invalid params", and the next read works', async () => {
      upstream.mode = 'stall';
      const stalled = await rpc(1, 'resources/read', { uri: 'parse://FaultItem/schema' });
      expect(stalled.status).toBe(200);
      expect(stalled.body.error.code).toBe(-32603);
      expect(stalled.body.error.code).not.toBe(-32602);
      expect(stalled.body.error.message).toMatch(/did not answer within|timed out/);

      upstream.mode = 'forward';
      const healthy = await rpc(2, 'resources/read', { uri: 'parse://FaultItem/schema' });
      expect(healthy.body.error).toBeUndefined();
      expect(healthy.body.result.contents[0].text).toContain('FaultItem');
      const tool = await rpc(3, 'tools/call', {
        name: 'count_objects',
        arguments: { class_name: 'FaultItem' },
      });
      expect(tool.body.result.isError).toBe(false);
    });
  });
});
