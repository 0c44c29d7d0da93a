import { Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import http from 'node:http';
import net from 'node:net';
import request from 'supertest';
import { eventually, openSsePost, startMcpTestApp, type McpTestApp } from './mcp-test-app';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };
const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
const MIB = 1_048_576;

/** A ping padded to exactly `size` bytes of JSON. */
function paddedPing(size: number): string {
  const base = JSON.stringify({ ...ping, params: { pad: '' } });
  return JSON.stringify({ ...ping, params: { pad: 'x'.repeat(size - base.length) } });
}

/** What the guard saw of each request: was the body parsed when it ran? */
const seenByGuard: Array<{ body: unknown }> = [];

@Injectable()
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string>; body?: unknown }>();
    seenByGuard.push({ body: req.body });
    return req.headers.authorization === 'Bearer good';
  }
}

interface RawResponse {
  status: number;
  headers: string;
  body: string;
}

/**
 * A request written by hand on a socket: the head, then only the body parts given (the rest of a
 * declared body never comes). Resolves with the response the server sends meanwhile.
 */
function rawPost(
  port: number,
  headers: Record<string, string | number>,
  parts: Array<string | Buffer> = [],
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const cut = received.indexOf('\r\n\r\n');
      if (cut < 0) return;
      const head = received.slice(0, cut);
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? NaN);
      const body = received.slice(cut + 4);
      if (Number.isFinite(length) && Buffer.byteLength(body) >= length) {
        socket.destroy();
        resolve({ status: Number(head.split(' ')[1]), headers: head, body });
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed without a full response: ${received}`)));
    const head = Object.entries({ Host: '127.0.0.1', ...headers })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`POST /mcp HTTP/1.1\r\n${head}\r\n\r\n`);
    for (const part of parts) socket.write(part);
  });
}

/** A chunked upload that sends `parts` and then ends (no Content-Length). */
function chunkedPost(
  port: number,
  headers: Record<string, string>,
  parts: string[],
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: { ...JSON_HEADERS, ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    for (const part of parts) req.write(part);
    req.end();
  });
}

describe('MCP endpoint: the body read before authentication is small', () => {
  let t: McpTestApp;
  let port: number;
  let factoryCalls = 0;

  beforeAll(async () => {
    t = await startMcpTestApp({
      mcp: { guards: [BearerGuard] },
      agentFactory: () => {
        factoryCalls++;
        return { permissions: 'readonly' };
      },
    });
    port = Number(new URL(t.base).port);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    seenByGuard.length = 0;
    factoryCalls = 0;
  });

  it('hands the guards the parsed body of an ordinary request', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    };
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Authorization', 'Bearer good')
      .send(initialize);
    expect(res.status).toBe(200);
    expect(seenByGuard).toEqual([{ body: initialize }]);
  });

  it('refuses a 1 MiB body without credentials with 413 before any of it is sent', async () => {
    // Only the head goes out: the answer cannot have waited for (or buffered) the body.
    const res = await rawPost(port, { ...JSON_HEADERS, 'Content-Length': MIB });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32700,
        message: 'Payload Too Large: a request without credentials may carry at most 65536 bytes',
      },
    });
    expect(res.headers).toMatch(/connection: close/i);
    expect(seenByGuard).toEqual([]);
    expect(factoryCalls).toBe(0);
  });

  it('refuses a chunked upload without credentials once it passes 64 KiB, mid-upload', async () => {
    // 80 KiB of an upload that never ends: the 413 comes while the client is still sending.
    const chunk = 'x'.repeat(80 * 1024);
    const res = await rawPost(port, { ...JSON_HEADERS, 'Transfer-Encoding': 'chunked' }, [
      `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
    ]);
    expect(res.status).toBe(413);
    expect(res.body).toContain('without credentials may carry at most 65536 bytes');
    expect(seenByGuard).toEqual([]);
  });

  it('lets the guards refuse forged credentials before a large body is read', async () => {
    const res = await rawPost(port, {
      ...JSON_HEADERS,
      Authorization: 'Bearer forged',
      'Content-Length': MIB,
    });
    expect(res.status).toBe(401);
    expect(res.headers).toMatch(/connection: close/i);
    // The guard ran with the body still unread, and the factory never ran.
    expect(seenByGuard).toEqual([{ body: undefined }]);
    expect(factoryCalls).toBe(0);
  });

  it('reads a large valid body once the caller is authenticated, up to maxBodyBytes', async () => {
    const server = t.app.getHttpServer();
    const large = await request(server)
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Authorization', 'Bearer good')
      .send(paddedPing(MIB));
    expect(large.status).toBe(200);
    expect(large.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(large.headers.connection).not.toBe('close');
    expect(seenByGuard).toEqual([{ body: undefined }]);

    // Chunked, without a declared length: the first 64 KiB are kept, the rest read after the guard.
    const text = paddedPing(300_000);
    const parts = [text.slice(0, 100_000), text.slice(100_000, 200_000), text.slice(200_000)];
    const chunked = await chunkedPost(port, { Authorization: 'Bearer good' }, parts);
    expect(chunked.status).toBe(200);
    expect(JSON.parse(chunked.body)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });

    const over = await request(server)
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Authorization', 'Bearer good')
      .send(paddedPing(MIB + 1));
    expect(over.status).toBe(413);
    expect(over.body.error.message).toBe(`Payload Too Large: body exceeds ${MIB} bytes`);
    const chunkedOver = await chunkedPost(port, { Authorization: 'Bearer good' }, [
      paddedPing(MIB + 1),
    ]);
    expect(chunkedOver.status).toBe(413);

    // Small requests are unaffected.
    const small = await request(server)
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Authorization', 'Bearer good')
      .send(ping);
    expect(small.status).toBe(200);
    // A declared length over the cap is refused before authentication; a chunked one only after.
    expect(factoryCalls).toBe(4);
  });

  it('answers an invalid large body after authentication like any invalid body', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Authorization', 'Bearer good')
      .send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(100_000)}"`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Parse error: invalid JSON');
  });
});

describe('MCP endpoint: the pre-auth limit and its hook are settings', () => {
  let t: McpTestApp;
  beforeAll(async () => {
    t = await startMcpTestApp({
      mcp: {
        preAuthMaxBodyBytes: 1024,
        preAuthenticate: (req) => req.headers['x-tenant-key'] === 'k1',
      },
    });
  });
  afterAll(() => t.close());

  it("uses the host's cheap check instead of the default credential headers", async () => {
    const server = t.app.getHttpServer();
    const anonymous = await request(server)
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Authorization', 'Bearer looks-like-a-token')
      .send(paddedPing(2000));
    expect(anonymous.status).toBe(413);
    expect(anonymous.body.error.message).toContain('at most 1024 bytes');
    const keyed = await request(server)
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('X-Tenant-Key', 'k1')
      .send(paddedPing(2000));
    expect(keyed.status).toBe(200);
    const small = await request(server).post('/mcp').set(JSON_HEADERS).send(paddedPing(1024));
    expect(small.status).toBe(200);
  });
});

describe('MCP endpoint: aborted uploads', () => {
  let t: McpTestApp;
  let port: number;
  let warn: jest.SpyInstance;
  let error: jest.SpyInstance;

  beforeAll(async () => {
    t = await startMcpTestApp({ mcp: { guards: [BearerGuard] } });
    port = Number(new URL(t.base).port);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn');
    error = jest.spyOn(Logger.prototype, 'error');
  });
  afterEach(() => jest.restoreAllMocks());

  /** Sends a head and part of the declared body, then drops the connection. */
  async function abortUpload(headers: Record<string, string | number>, sent: string) {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const head = Object.entries({ Host: '127.0.0.1', ...JSON_HEADERS, ...headers })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`POST /mcp HTTP/1.1\r\n${head}\r\n\r\n${sent}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
  }

  const abortLines = () =>
    warn.mock.calls.map((args) => String(args[0])).filter((m) => /abort/i.test(m));

  it('logs one line without a stack trace and keeps serving', async () => {
    await abortUpload({ 'Content-Length': 5000 }, '{"jsonrpc":"2.0","id":1,');
    await eventually(() => expect(abortLines()).toHaveLength(1));
    expect(abortLines()[0]).not.toMatch(/\n|\s+at\s/);
    expect(error).not.toHaveBeenCalled();

    // A large body deferred past the guard and cut short while it is read: the same one line.
    await abortUpload(
      { 'Content-Length': 500_000, Authorization: 'Bearer good' },
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + 'x'.repeat(100_000),
    );
    await eventually(() => expect(abortLines()).toHaveLength(2));
    expect(abortLines()[1]).not.toMatch(/\n|\s+at\s/);
    expect(error).not.toHaveBeenCalled();

    const after = await request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Authorization', 'Bearer good')
      .send(ping);
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });
});

describe('MCP endpoint: GET streams per principal', () => {
  let t: McpTestApp;
  beforeAll(async () => {
    t = await startMcpTestApp({
      mcp: { maxGetStreamsPerPrincipal: 2, heartbeatIntervalMs: 100 },
      // GET streams never reach Parse: a made-up token names the principal.
      agentFactory: (req) => ({
        permissions: 'readonly',
        sessionToken: `r:test-${String(req.headers['x-user'])}`,
      }),
    });
  });
  afterAll(() => t.close());

  const openGet = (user: string) =>
    openSsePost(t.url, undefined, { Accept: 'text/event-stream', 'X-User': user }, 'GET');

  it("closes a caller's oldest stream when it opens one too many, and nobody else's", async () => {
    const first = await openGet('u1');
    const second = await openGet('u1');
    const other = await openGet('u2');
    for (const s of [first, second, other]) expect(s.status).toBe(200);
    const third = await openGet('u1');
    expect(third.status).toBe(200);

    // The oldest of u1 ends with a comment saying why.
    const rest = await first.rest();
    expect(rest.map((e) => e.comment).filter(Boolean)).toContain(
      'closed: newer stream of this caller',
    );
    // The others keep receiving keep-alives.
    for (const s of [second, third, other]) {
      const event = await s.next();
      expect(event?.comment).toBe('keep-alive');
    }
    for (const s of [second, third, other]) s.abort();
  });
});
