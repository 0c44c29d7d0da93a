import {
  ForbiddenException,
  Injectable,
  Logger,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import request from 'supertest';
import {
  AgentUnauthorizedError,
  RateLimitExceededError,
  RateLimiterUnavailableError,
  type RateLimiter,
} from 'nestjs-parse-agent';
import { startMcpTestApp, type McpTestApp } from './mcp-test-app';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };
const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
const err = (code: number, message: string, id: unknown = null) => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});
const UNAUTHORIZED = err(-32001, 'Unauthorized');

describe('MCP endpoint: transport checks before authentication (Nest e2e)', () => {
  let t: McpTestApp;
  let factoryCalls = 0;

  beforeAll(async () => {
    t = await startMcpTestApp({
      agentFactory: () => {
        factoryCalls++;
        return { permissions: 'readonly' };
      },
      mcp: {
        maxBodyBytes: 2048,
        allowedOrigins: ['https://app.example.com', '.trusted.test'],
      },
    });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    factoryCalls = 0;
  });

  const post = () => request(t.app.getHttpServer()).post('/mcp');

  it('answers a JSON ping', async () => {
    const res = await post().set(JSON_HEADERS).send(ping);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('refuses other methods with 405 and Allow', async () => {
    const res = await request(t.app.getHttpServer()).put('/mcp').set(JSON_HEADERS).send(ping);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST, GET, DELETE');
    expect(res.body).toEqual(err(-32700, 'method_not_allowed'));
    const patch = await request(t.app.getHttpServer()).patch('/mcp').send('{}');
    expect(patch.status).toBe(405);
    expect(factoryCalls).toBe(0);
  });

  it('refuses a non-JSON content type with 415 (charset and case are ignored)', async () => {
    const res = await post().set('Content-Type', 'text/plain').send(JSON.stringify(ping));
    expect(res.status).toBe(415);
    expect(res.body).toEqual(
      err(-32700, 'Unsupported Media Type: Content-Type must be application/json'),
    );
    const missing = await request(t.app.getHttpServer()).post('/mcp');
    expect(missing.status).toBe(415);
    const charset = await post()
      .set('Content-Type', 'Application/JSON; charset=utf-8')
      .send(JSON.stringify(ping));
    expect(charset.status).toBe(200);
    expect(factoryCalls).toBe(1);
  });

  it('refuses a body that is not valid UTF-8 as a parse error, and the next body still parses', async () => {
    // 0xff never occurs in UTF-8; a lenient decoder would turn it into U+FFFD and run the call.
    const invalid = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}'),
    ]);
    // Sent as raw bytes (supertest would serialize a Buffer as JSON).
    const raw = (body: Buffer) =>
      post()
        .set(JSON_HEADERS)
        .serialize((b: Buffer) => b as unknown as string)
        .send(body);
    const bad = await raw(invalid);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(err(-32700, 'Parse error: invalid JSON'));
    // A truncated multi-byte sequence at the very end is refused too, and leaves nothing behind.
    const truncated = await raw(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}'),
        Buffer.from([0xe2, 0x82]),
      ]),
    );
    expect(truncated.status).toBe(400);
    const accented = await raw(
      Buffer.from(JSON.stringify({ ...ping, params: { note: 'café ✓' } })),
    );
    expect(accented.status).toBe(200);
    expect(accented.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(factoryCalls).toBe(1);
  });

  it('refuses origins outside the allowlist with 403; no Origin passes', async () => {
    const bad = await post().set(JSON_HEADERS).set('Origin', 'https://evil.example').send(ping);
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual(err(-32700, 'Origin not allowed'));
    for (const origin of [
      'https://app.example.com',
      'https://trusted.test',
      'https://a.trusted.test',
    ]) {
      const ok = await post().set(JSON_HEADERS).set('Origin', origin).send(ping);
      expect(ok.status).toBe(200);
    }
    expect(factoryCalls).toBe(3);
  });

  it('refuses a non-loopback Host while listening on loopback (DNS rebinding), any port', async () => {
    const bad = await post().set(JSON_HEADERS).set('Host', 'attacker.example:80').send(ping);
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual(err(-32700, 'Host not allowed'));
    for (const host of ['localhost:9999', '127.0.0.1', '[::1]:3000', 'LOCALHOST']) {
      const ok = await post().set(JSON_HEADERS).set('Host', host).send(ping);
      expect(ok.status).toBe(200);
    }
    expect(factoryCalls).toBe(4);
  });

  it('refuses a body over maxBodyBytes with 413; exactly the cap passes', async () => {
    const pad = (size: number) => {
      const base = JSON.stringify({ ...ping, params: { pad: '' } });
      return JSON.stringify({ ...ping, params: { pad: 'x'.repeat(size - base.length) } });
    };
    const atCap = pad(2048);
    expect(Buffer.byteLength(atCap)).toBe(2048);
    const ok = await post().set(JSON_HEADERS).send(atCap);
    expect(ok.status).toBe(200);
    const over = await post().set(JSON_HEADERS).send(pad(2049));
    expect(over.status).toBe(413);
    expect(over.body).toEqual(err(-32700, 'Payload Too Large: body exceeds 2048 bytes'));
    const huge = await post()
      .set(JSON_HEADERS)
      .send('{"a":"' + 'y'.repeat(200_000) + '"}');
    expect(huge.status).toBe(413);
    expect(factoryCalls).toBe(1);
  });

  it('answers 400 Parse error for invalid JSON and for nesting deeper than 20', async () => {
    for (const body of ['{', '{"a":}', 'nope', '\u00ff\u00fe', '{"method":"ping",}']) {
      const res = await post().set(JSON_HEADERS).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(err(-32700, 'Parse error: invalid JSON'));
    }
    const nest = (depth: number) =>
      JSON.stringify({
        ...ping,
        params: JSON.parse('{"a":'.repeat(depth - 1) + '1' + '}'.repeat(depth - 1)),
      });
    const deep20 = nest(20);
    const ok = await post().set(JSON_HEADERS).send(deep20);
    expect(ok.status).toBe(200);
    const deep21 = await post().set(JSON_HEADERS).send(nest(21));
    expect(deep21.status).toBe(400);
    expect(deep21.body).toEqual(err(-32700, 'Parse error: invalid JSON'));
    const brackets = await post()
      .set(JSON_HEADERS)
      .send('['.repeat(1000) + ']'.repeat(1000));
    expect(brackets.status).toBe(400);
    expect(factoryCalls).toBe(1);
  });

  it('answers 400 Invalid Request for bodies without a method, before the factory runs', async () => {
    for (const body of [
      '',
      '{}',
      '[]',
      '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
      '"ping"',
      '42',
      'null',
      '{"method":""}',
      '{"method":5}',
      '{"id":1}',
    ]) {
      const res = await post().set(JSON_HEADERS).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32600);
      expect(res.body.error.message).toMatch(/^Invalid Request/);
      // The id is echoed when it is a valid one, so the client can match the refusal.
      expect(res.body.id).toBe(body === '{"id":1}' ? 1 : null);
    }
    expect(factoryCalls).toBe(0);
  });

  it('keeps serving after malformed requests', async () => {
    await post().set(JSON_HEADERS).send('{{{{');
    await post().set(JSON_HEADERS).send('x'.repeat(5000));
    const res = await post()
      .set(JSON_HEADERS)
      .send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe('after');
  });

  it('accepts a notification and a client response with 202 and no body', async () => {
    const n = await post()
      .set(JSON_HEADERS)
      .send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(n.status).toBe(202);
    expect(n.text).toBe('');
    const r = await post().set(JSON_HEADERS).send({ jsonrpc: '2.0', id: 7, result: {} });
    expect(r.status).toBe(202);
    expect(r.text).toBe('');
  });

  it('refuses an unsupported MCP-Protocol-Version with 400 and accepts supported ones', async () => {
    const bad = await post().set(JSON_HEADERS).set('MCP-Protocol-Version', '1999-01-01').send(ping);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(-32600);
    expect(bad.body.error.message).toMatch(/MCP-Protocol-Version.*2025-06-18/);
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
      const ok = await post().set(JSON_HEADERS).set('MCP-Protocol-Version', v).send(ping);
      expect(ok.status).toBe(200);
    }
  });

  it('negotiates the protocol on initialize and issues a session id', async () => {
    const res = await post()
      .set(JSON_HEADERS)
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 't', version: '1' },
        },
      });
    expect(res.status).toBe(200);
    expect(res.body.result.protocolVersion).toBe('2025-06-18');
    expect(res.headers['mcp-session-id']).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });
});

describe('MCP endpoint: sessions (Mcp-Session-Id)', () => {
  let t: McpTestApp;
  beforeAll(async () => {
    t = await startMcpTestApp({
      agentFactory: (req) => ({
        sessionToken: typeof req.headers['x-user'] === 'string' ? undefined : undefined,
        tenantId: typeof req.headers['x-tenant'] === 'string' ? req.headers['x-tenant'] : undefined,
      }),
    });
  });
  afterAll(() => t.close());

  const server = () => t.app.getHttpServer();
  const initialize = async (tenant = 'a') => {
    const res = await request(server())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-Tenant', tenant)
      .send({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18' },
      });
    return res.headers['mcp-session-id'] as string;
  };

  it('honours an issued id, 404s unknown ids, allows a missing id, and ends with DELETE', async () => {
    const id = await initialize();
    const withId = await request(server())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-Tenant', 'a')
      .set('Mcp-Session-Id', id)
      .send(ping);
    expect(withId.status).toBe(200);

    const stateless = await request(server()).post('/mcp').set(JSON_HEADERS).send(ping);
    expect(stateless.status).toBe(200);

    const unknown = await request(server())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Mcp-Session-Id', 'x'.repeat(32))
      .send(ping);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      ...err(-32000, 'Session not found: start a new session with initialize'),
      id: ping.id,
    });

    const del = await request(server())
      .delete('/mcp')
      .set('X-Tenant', 'a')
      .set('Mcp-Session-Id', id);
    expect(del.status).toBe(204);
    const after = await request(server())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-Tenant', 'a')
      .set('Mcp-Session-Id', id)
      .send(ping);
    expect(after.status).toBe(404);
    const again = await request(server())
      .delete('/mcp')
      .set('X-Tenant', 'a')
      .set('Mcp-Session-Id', id);
    expect(again.status).toBe(404);
    const noId = await request(server()).delete('/mcp');
    expect(noId.status).toBe(400);
  });

  it('does not let another principal use a session id', async () => {
    const id = await initialize('a');
    const other = await request(server())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-Tenant', 'b')
      .set('Mcp-Session-Id', id)
      .send(ping);
    expect(other.status).toBe(404);
    const del = await request(server())
      .delete('/mcp')
      .set('X-Tenant', 'b')
      .set('Mcp-Session-Id', id);
    expect(del.status).toBe(404);
    const owner = await request(server())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-Tenant', 'a')
      .set('Mcp-Session-Id', id)
      .send(ping);
    expect(owner.status).toBe(200);
  });
});

@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string> }>();
    if (req.headers['x-guard'] === 'throw-unauthorized')
      throw new UnauthorizedException('no token here');
    if (req.headers['x-guard'] === 'throw-forbidden') throw new ForbiddenException('role missing');
    if (req.headers['x-guard'] === 'throw-error') throw new Error('guard bug');
    return req.headers['x-guard'] === 'allow';
  }
}

describe('MCP endpoint: host guards, agentFactory refusals and failures', () => {
  let t: McpTestApp;
  const seen: string[] = [];
  beforeAll(async () => {
    t = await startMcpTestApp({
      mcp: { guards: [HeaderGuard], requireCustomHeader: 'X-MCP-Client' },
      agentFactory: (req) => {
        seen.push(String(req.headers['x-guard']));
        const mode = req.headers['x-factory'];
        if (mode === 'refuse')
          throw new AgentUnauthorizedError('token expired for user 42', { reason: 'expired' });
        if (mode === 'crash') throw new TypeError('database password is hunter2');
        if (mode === 'async-refuse')
          return Promise.reject(new AgentUnauthorizedError('nope', { reason: 'x' }));
        return { permissions: 'readonly' };
      },
    });
  });
  afterAll(() => t.close());

  const post = (guard: string, extra: Record<string, string> = {}) =>
    request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-MCP-Client', 'test')
      .set('X-Guard', guard)
      .set(extra)
      .send(ping);

  it('logs each 401 with its reason and request id, which never reach the wire', async () => {
    const warnings: string[] = [];
    Logger.overrideLogger({
      log: () => undefined,
      error: () => undefined,
      warn: (message: unknown) => warnings.push(String(message)),
    });
    try {
      const factory = await post('allow', { 'X-Factory': 'refuse', 'X-Request-Id': 'req-401-a' });
      const guard = await post('throw-unauthorized', { 'X-Request-Id': 'req-401-b' });
      const denied = await post('deny');
      for (const res of [factory, guard, denied]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
      expect(warnings).toEqual([
        'Unauthorized: AgentUnauthorizedError reason="expired" request_id=req-401-a',
        'Unauthorized: UnauthorizedException reason="no token here" request_id=req-401-b',
        expect.stringMatching(
          /^Unauthorized: ForbiddenException reason="a guard returned false" request_id=[0-9a-f-]{36}$/,
        ),
      ]);
      // Without an id from the host or the client, the one made up is sent back to quote.
      expect(warnings[2]).toContain(`request_id=${String(denied.headers['x-request-id'])}`);
      // The factory error's message stays out of the log as well as the wire.
      expect(warnings.join('\n')).not.toContain('user 42');
    } finally {
      Logger.overrideLogger(false);
      seen.length = 0;
    }
  });

  it('runs transport checks before the guards', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-Guard', 'throw-unauthorized')
      .send(ping);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(err(-32700, 'Required custom header missing or invalid'));
    const badJson = await request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-MCP-Client', 'test')
      .send('{oops');
    expect(badJson.status).toBe(400);
  });

  it('maps a guard refusal (false, Unauthorized, Forbidden) to the fixed 401 body', async () => {
    for (const guard of ['deny', 'throw-unauthorized', 'throw-forbidden']) {
      const res = await post(guard);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect(res.text).not.toMatch(/token|role|Forbidden|Unauthorized[^"]/);
    }
    expect(seen).toEqual([]);
  });

  it('answers 500 Internal error when a guard crashes', async () => {
    const res = await post('throw-error');
    expect(res.status).toBe(500);
    expect(res.body).toEqual(err(-32603, 'Internal error'));
    expect(res.text).not.toContain('guard bug');
  });

  it('runs the factory after the guards allow; a refusal is the fixed 401 body', async () => {
    const ok = await post('allow');
    expect(ok.status).toBe(200);
    for (const mode of ['refuse', 'async-refuse']) {
      const res = await post('allow', { 'X-Factory': mode });
      expect(res.status).toBe(401);
      expect(res.text).toBe(JSON.stringify(UNAUTHORIZED));
    }
    expect(seen).toEqual(['allow', 'allow', 'allow']);
  });

  it('answers 500 -32603 without the reason when the factory fails otherwise', async () => {
    const res = await post('allow', { 'X-Factory': 'crash' });
    expect(res.status).toBe(500);
    expect(res.text).toBe(JSON.stringify(err(-32603, 'Internal error')));
  });

  it('guards and authenticates the tools listing too', async () => {
    const get = () => request(t.app.getHttpServer()).get('/mcp/tools').set('X-MCP-Client', 't');
    const noHeader = await request(t.app.getHttpServer()).get('/mcp/tools').set('X-Guard', 'allow');
    expect(noHeader.status).toBe(403);
    const denied = await get().set('X-Guard', 'deny');
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual(UNAUTHORIZED);
    const refused = await get().set('X-Guard', 'allow').set('X-Factory', 'refuse');
    expect(refused.status).toBe(401);
    const ok = await get().set('X-Guard', 'allow');
    expect(ok.status).toBe(200);
    const names = (ok.body as Array<{ name: string }>).map((d) => d.name);
    expect(names).toContain('query_class');
    expect(names).not.toContain('create_object');
    expect(ok.body[0]).toEqual(
      expect.objectContaining({ name: expect.any(String), inputSchema: expect.any(Object) }),
    );
    expect(ok.body[0]).not.toHaveProperty('handler');
  });
});

describe('MCP endpoint: pre-auth rate limiter and streaming off', () => {
  let t: McpTestApp;
  let allowed = 2;
  let factoryCalls = 0;
  let storeDown: Error | undefined;
  const limiter: RateLimiter = {
    check: (key?: string) => {
      expect(key).toMatch(/^mcp:/);
      if (storeDown) throw storeDown;
      if (allowed-- <= 0) throw new RateLimitExceededError(2.2, 2, 60);
    },
  };
  beforeAll(async () => {
    t = await startMcpTestApp({
      mcp: { preAuthRateLimiter: limiter, streaming: false },
      agentFactory: () => {
        factoryCalls++;
        return {};
      },
    });
  });
  afterAll(() => t.close());

  it('answers 429 with Retry-After before anything else, even for malformed requests', async () => {
    const server = t.app.getHttpServer();
    expect((await request(server).post('/mcp').set(JSON_HEADERS).send(ping)).status).toBe(200);
    expect((await request(server).post('/mcp').set(JSON_HEADERS).send(ping)).status).toBe(200);
    const limited = await request(server).post('/mcp').set(JSON_HEADERS).send(ping);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('3');
    expect(limited.body).toEqual(err(-32000, 'Too Many Requests'));
    const malformed = await request(server).put('/mcp').send('{');
    expect(malformed.status).toBe(429);
    expect(factoryCalls).toBe(2);
    allowed = 100;
  });

  it('answers 503, not 429, when the limiter cannot count (its store down or failing)', async () => {
    const server = t.app.getHttpServer();
    const before = factoryCalls;
    for (const failure of [
      new RateLimiterUnavailableError(3, 2, 60),
      new Error('ECONNREFUSED 127.0.0.1:6379'),
    ]) {
      storeDown = failure;
      const res = await request(server).post('/mcp').set(JSON_HEADERS).send(ping);
      expect(res.status).toBe(503);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.body).toEqual(err(-32000, 'Service Unavailable: rate limiter unavailable'));
      // The store's own error text never reaches the client.
      expect(JSON.stringify(res.body)).not.toContain('6379');
    }
    storeDown = undefined;
    expect(factoryCalls).toBe(before);
    expect((await request(server).post('/mcp').set(JSON_HEADERS).send(ping)).status).toBe(200);
  });

  it('with streaming off: GET is 405 and an SSE Accept still gets JSON', async () => {
    const server = t.app.getHttpServer();
    const get = await request(server).get('/mcp').set('Accept', 'text/event-stream');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST, DELETE');
    const res = await request(server)
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .send(ping);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.result).toEqual({});
  });
});

describe('MCP endpoint: a host app that parses JSON before Nest', () => {
  let t: McpTestApp;
  beforeAll(async () => {
    const server = express();
    server.use(express.json({ limit: '5mb' }));
    t = await startMcpTestApp({
      httpAdapter: new ExpressAdapter(server),
      mcp: { maxBodyBytes: 4096 },
    });
  });
  afterAll(() => t.close());

  it('applies the size and depth limits to the body the host already parsed', async () => {
    const server = t.app.getHttpServer();
    const ok = await request(server).post('/mcp').set(JSON_HEADERS).send(ping);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    const big = await request(server)
      .post('/mcp')
      .set(JSON_HEADERS)
      .send({ ...ping, params: { pad: 'x'.repeat(10_000) } });
    expect(big.status).toBe(413);
    expect(big.body).toEqual(err(-32700, 'Payload Too Large: body exceeds 4096 bytes'));
    const deep = await request(server)
      .post('/mcp')
      .set(JSON_HEADERS)
      .send(JSON.stringify({ ...ping, params: JSON.parse('['.repeat(25) + ']'.repeat(25)) }));
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual(err(-32700, 'Parse error: invalid JSON'));
    const noMethod = await request(server).post('/mcp').set(JSON_HEADERS).send({ id: 1 });
    expect(noMethod.status).toBe(400);
    expect(noMethod.body).toEqual(err(-32600, 'Invalid Request: jsonrpc must be "2.0"', 1));
  });
});

describe('MCP endpoint: under a global prefix and a custom path', () => {
  let t: McpTestApp;
  beforeAll(async () => {
    t = await startMcpTestApp({ globalPrefix: 'api', mcp: { path: '/agent' } });
  });
  afterAll(() => t.close());

  it('runs the transport checks on the prefixed route', async () => {
    const server = t.app.getHttpServer();
    const ok = await request(server).post('/api/agent').set(JSON_HEADERS).send(ping);
    expect(ok.status).toBe(200);
    const bad = await request(server).post('/api/agent').set(JSON_HEADERS).send('{nope');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(err(-32700, 'Parse error: invalid JSON'));
    const put = await request(server).put('/api/agent/').send('{}');
    expect(put.status).toBe(405);
    const tools = await request(server).get('/api/agent/tools');
    expect(tools.status).toBe(200);
    expect(Array.isArray(tools.body)).toBe(true);
    expect((await request(server).post('/mcp').set(JSON_HEADERS).send(ping)).status).toBe(404);
  });
});

describe('MCP endpoint: header smuggling', () => {
  let t: McpTestApp;
  const seen: Array<string | string[] | undefined> = [];
  beforeAll(async () => {
    t = await startMcpTestApp({
      agentFactory: (req) => {
        seen.push(req.headers['x_mcp_api_key'], req.headers['x-mcp-api-key']);
        return {};
      },
    });
  });
  afterAll(() => t.close());

  it('drops headers whose name contains an underscore before anything reads them', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X_MCP_API_Key', 'smuggled')
      .set('X-MCP-API-Key', 'genuine')
      .send(ping);
    expect(res.status).toBe(200);
    expect(seen).toEqual([undefined, 'genuine']);
  });
});
