import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  Controller,
  Get,
  Injectable,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import {
  AgentUnauthorizedError,
  bindAgentToPrincipal,
  ParseAgentAuthGuard,
  type PolicedToolContext,
} from 'nestjs-parse-agent';
import {
  resultData,
  seedHttpNotes,
  startClientTestApp,
  type HttpSeed,
  type ToolProbe,
} from './mcp-sdk-fixtures';
import {
  delay,
  eventually,
  messagesOf,
  openSsePost,
  startMcpTestApp,
  type McpTestApp,
} from './mcp-test-app';

export type Platform = 'express' | 'fastify';

/** What the host's guard leaves on the request it saw (Express's req, Fastify's request). */
const GUARD_TOKEN = Symbol('e2e-guard-token');
type GuardedRequest = {
  headers: Record<string, string | undefined>;
  body?: { method?: string };
  [GUARD_TOKEN]?: string;
};
/** The JSON-RPC method of each body the guard saw as `request.body` (as on Express). */
const guardSawMethods: Array<string | undefined> = [];

/**
 * A host guard: refuses a request without `Authorization: Bearer <token>`, and leaves the token on
 * the request object it was given. agentFactory reads it from there, so each platform must hand
 * agentFactory the very request its guards saw.
 */
@Injectable()
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    guardSawMethods.push(request.body?.method);
    const match = /^Bearer (\S+)$/.exec(String(request.headers.authorization ?? ''));
    if (!match) return false;
    request[GUARD_TOKEN] = match[1];
    return true;
  }
}

/** A route of the host's own under the endpoint's path: the endpoint must leave it alone. */
@Controller('mcp/host-health')
class HostHealthController {
  @Get()
  health() {
    return { ok: true };
  }
}

const MAX_BODY = 256 * 1024;
const PRE_AUTH_MAX_BODY = 16 * 1024;

function rpc(id: number, method: string, params?: Record<string, unknown>) {
  return { jsonrpc: '2.0', id, method, ...(params ? { params } : {}) };
}

/**
 * The MCP endpoint's behaviour that must not depend on Nest's HTTP platform, run by the official
 * SDK client (and raw HTTP where the SDK does not reach: body limits, resumption, shutdown).
 */
export function describePlatformScenarios(platform: Platform): void {
  describe(`MCP endpoint on ${platform}`, () => {
    let t: McpTestApp;
    let seed: HttpSeed;
    const probe: ToolProbe = { started: 0, aborted: [] };
    const clients: Client[] = [];

    beforeAll(async () => {
      seed = await seedHttpNotes();
      t = await startClientTestApp(probe, {
        platform,
        mcp: {
          guards: [BearerGuard],
          resumable: true,
          maxBodyBytes: MAX_BODY,
          preAuthMaxBodyBytes: PRE_AUTH_MAX_BODY,
        },
        agentFactory: (req) => {
          const token = (req as unknown as GuardedRequest)[GUARD_TOKEN];
          if (!token) throw new AgentUnauthorizedError('no guard token', { reason: 'no_token' });
          return { sessionToken: token };
        },
      });
    });
    afterAll(async () => {
      for (const c of clients) await c.close().catch(() => undefined);
      await t?.close();
    });
    beforeEach(() => {
      probe.started = 0;
      probe.aborted = [];
    });

    async function connect(sessionToken: string) {
      const transport = new StreamableHTTPClientTransport(new URL(t.url), {
        requestInit: { headers: { Authorization: `Bearer ${sessionToken}` } },
      });
      const client = new Client({ name: `parse-agent-${platform}`, version: '1.0.0' });
      await client.connect(transport);
      clients.push(client);
      return { client, transport };
    }

    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(t.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const bearer = () => ({ Authorization: `Bearer ${seed.alice.sessionToken}` });

    it('initializes with a session (the SDK client) and lists tools', async () => {
      const { client, transport } = await connect(seed.alice.sessionToken);
      expect(client.getServerVersion()).toEqual(
        expect.objectContaining({ name: 'nestjs-parse-agent' }),
      );
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['query_class', 'http_slow']));
      expect(names).not.toContain('delete_object');
      // The guard saw the parsed message as request.body, on either platform.
      expect(guardSawMethods).toEqual(expect.arrayContaining(['initialize', 'tools/list']));
    });

    it('runs the host guard first: without a token the fixed 401 JSON-RPC body, and no agent', async () => {
      const transport = new StreamableHTTPClientTransport(new URL(t.url));
      const client = new Client({ name: 'anonymous', version: '1.0.0' });
      await expect(client.connect(transport)).rejects.toThrow();
      const res = await post(rpc(1, 'tools/list'));
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Unauthorized' },
      });
    });

    it('scopes query_class to the caller: the owner sees her row, another user does not', async () => {
      const args = { class_name: seed.className, order: 'rank' };
      const alice = (await connect(seed.alice.sessionToken)).client;
      const bob = (await connect(seed.bob.sessionToken)).client;
      const asAlice = await alice.callTool({ name: 'query_class', arguments: args });
      const aliceRows = resultData(asAlice).results as Array<Record<string, unknown>>;
      expect(aliceRows.map((r) => r.title)).toEqual(['alice secret', 'public note']);
      const asBob = await bob.callTool({ name: 'query_class', arguments: args });
      expect(JSON.stringify(asBob)).not.toContain('alice secret');
      expect(JSON.stringify(asBob)).not.toContain(seed.aliceRowId);
    });

    it('streams progress over SSE and cancels a running tool (notifications/cancelled)', async () => {
      const { client } = await connect(seed.alice.sessionToken);
      const progress: Array<{ progress: number; total?: number }> = [];
      const result = await client.callTool({ name: 'http_slow', arguments: {} }, undefined, {
        onprogress: (p) => progress.push(p),
      });
      expect(resultData(result)).toEqual({ done: true });
      expect(progress.slice(-2).map((p) => p.progress)).toEqual([1, 2]);

      const controller = new AbortController();
      const pending = client.callTool({ name: 'http_wait', arguments: {} }, undefined, {
        signal: controller.signal,
      });
      await eventually(() => expect(probe.started).toBe(1));
      controller.abort('user stop');
      await expect(pending).rejects.toThrow();
      await eventually(() => expect(probe.aborted).toEqual(['notifications_cancelled']));
    });

    it('delivers tools/list_changed on the GET stream; DELETE ends the session (then 404)', async () => {
      const { client, transport } = await connect(seed.alice.sessionToken);
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed++;
      });
      await delay(200);
      t.tools.register({
        name: `late_${platform}`,
        description: 'Appears after the client connected.',
        handler: () => ({ ok: true }),
      });
      await eventually(() => expect(changed).toBeGreaterThanOrEqual(1));
      const sessionId = transport.sessionId!;
      await transport.terminateSession();
      expect(transport.sessionId).toBeUndefined();
      const after = await post(rpc(9, 'tools/list'), { ...bearer(), 'Mcp-Session-Id': sessionId });
      expect(after.status).toBe(404);
      expect(((await after.json()) as { id: unknown }).id).toBe(9);
    });

    it('ends the calls of a session it ends: DELETE aborts a streaming call in flight', async () => {
      const { client, transport } = await connect(seed.alice.sessionToken);
      const pending = client.callTool({ name: 'http_wait', arguments: {} }).then(
        () => 'answered',
        () => 'failed',
      );
      await eventually(() => expect(probe.started).toBe(1));
      await transport.terminateSession();
      await eventually(() => expect(probe.aborted).toEqual(['session_ended']));
      await pending;
    });

    it('bounds the body: over maxBodyBytes a 413 JSON-RPC error; over the pre-auth limit only with credentials', async () => {
      const padded = (bytes: number) =>
        JSON.stringify({ ...rpc(3, 'tools/list'), params: { _meta: { pad: 'x'.repeat(bytes) } } });
      const tooLarge = await post(padded(MAX_BODY + 1024), bearer());
      expect(tooLarge.status).toBe(413);
      expect(await tooLarge.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: `Payload Too Large: body exceeds ${MAX_BODY} bytes` },
      });
      // Between the two limits: refused at once without credentials, read after the guard with.
      const anonymous = await post(padded(PRE_AUTH_MAX_BODY + 1024));
      expect(anonymous.status).toBe(413);
      expect(((await anonymous.json()) as { error: { message: string } }).error.message).toMatch(
        /without credentials may carry at most/,
      );
      const authenticated = await post(padded(PRE_AUTH_MAX_BODY + 1024), bearer());
      expect(authenticated.status).toBe(200);
      const listed = (await authenticated.json()) as { id: number; result: { tools: unknown[] } };
      expect(listed.id).toBe(3);
      expect(listed.result.tools.length).toBeGreaterThan(0);
      // Not JSON: the gate's exact parse error, not the platform's own.
      const broken = await post('{"jsonrpc":"2.0",', bearer());
      expect(broken.status).toBe(400);
      expect(((await broken.json()) as { error: { code: number } }).error.code).toBe(-32700);
    });

    it('resumes a streaming call after a lost connection (GET with Last-Event-ID)', async () => {
      const headers = { ...bearer(), 'MCP-Protocol-Version': '2025-11-25' };
      const stream = await openSsePost(
        t.url,
        rpc(41, 'tools/call', { name: 'http_slow', arguments: {} }),
        headers,
      );
      expect(stream.status).toBe(200);
      const first = await stream.next();
      expect(first?.id).toBeTruthy();
      stream.abort();
      const resumed = await openSsePost(
        t.url,
        undefined,
        { ...headers, 'Last-Event-ID': first!.id! },
        'GET',
      );
      expect(resumed.status).toBe(200);
      const messages = messagesOf(await resumed.rest());
      const response = messages.pop()!;
      expect(response.id).toBe(41);
      expect(resultData(response.result!)).toEqual({ done: true });
      // Another caller cannot resume it.
      const other = await fetch(t.url, {
        headers: {
          Authorization: `Bearer ${seed.bob.sessionToken}`,
          Accept: 'text/event-stream',
          'Last-Event-ID': first!.id!,
        },
      });
      expect(other.status).toBe(404);
    });
  });

  describe(`MCP endpoint on ${platform}: the shipped guards`, () => {
    const OPERATOR_KEY = 'platform-scenarios-operator-key';
    let t: McpTestApp;
    let seed: HttpSeed;

    beforeAll(async () => {
      seed = await seedHttpNotes();
      t = await startMcpTestApp({
        platform,
        module: { auth: { apiKey: OPERATOR_KEY } },
        // The principal the guard put on the request it saw decides the agent.
        agentFactory: bindAgentToPrincipal({ requireTenant: false }),
        mcp: { guards: [ParseAgentAuthGuard] },
      });
    });
    afterAll(() => t?.close());

    async function connect(headers: Record<string, string>): Promise<Client> {
      const client = new Client({ name: `shipped-${platform}`, version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers } }),
      );
      return client;
    }

    it('a verified Parse session acts as that user; a bad token and no credentials get the fixed 401', async () => {
      const alice = await connect({ Authorization: `Bearer ${seed.alice.sessionToken}` });
      const args = { class_name: seed.className, order: 'rank' };
      const rows = resultData(await alice.callTool({ name: 'query_class', arguments: args }))
        .results as Array<Record<string, unknown>>;
      expect(rows.map((r) => r.title)).toEqual(['alice secret', 'public note']);
      const bob = await connect({ Authorization: `Bearer ${seed.bob.sessionToken}` });
      const asBob = await bob.callTool({ name: 'query_class', arguments: args });
      expect(JSON.stringify(asBob)).not.toContain('alice secret');
      await Promise.all([alice.close(), bob.close()]);

      const refused: Array<Record<string, string>> = [
        { Authorization: 'Bearer r:not-a-session' },
        {},
      ];
      for (const headers of refused) {
        const res = await fetch(t.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
          body: JSON.stringify(rpc(1, 'tools/list')),
        });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'Unauthorized' },
        });
      }
    });

    it('the operator key acts as the operator', async () => {
      const operator = await connect({ 'X-MCP-API-Key': OPERATOR_KEY });
      const args = { class_name: seed.className, order: 'rank' };
      const rows = resultData(await operator.callTool({ name: 'query_class', arguments: args }))
        .results as Array<Record<string, unknown>>;
      expect(rows.map((r) => r.title)).toEqual(['alice secret', 'public note']);
      await operator.close();
    });
  });

  describe(`MCP endpoint on ${platform}: paths under the endpoint`, () => {
    let t: McpTestApp;
    beforeAll(async () => {
      t = await startMcpTestApp({ platform, controllers: [HostHealthController] });
    });
    afterAll(() => t?.close());

    it('answers a path the endpoint has no route for with a JSON-RPC 404, not the platform page', async () => {
      for (const [method, path] of [
        ['GET', '/mcp/foo'],
        ['POST', '/mcp/foo'],
        ['DELETE', '/mcp/foo/bar'],
        ['GET', '/mcp/tools/extra'],
      ] as const) {
        const res = await fetch(`${t.base}${path}`, {
          method,
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          ...(method === 'POST' ? { body: JSON.stringify(rpc(1, 'ping')) } : {}),
        });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const body = (await res.json()) as {
          jsonrpc: string;
          error: { code: number; message: string };
        };
        expect(body).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32601, message: expect.stringMatching(/^Not Found: .*\/mcp/) },
        });
      }
      // A method the tools listing does not answer: 405 with Allow, in JSON-RPC too.
      const wrongMethod = await fetch(`${t.url}/tools`, { method: 'POST' });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('GET');
      expect(((await wrongMethod.json()) as { jsonrpc: string }).jsonrpc).toBe('2.0');
    });

    it('leaves the host its own routes under the endpoint path, and paths elsewhere alone', async () => {
      const own = await fetch(`${t.base}/mcp/host-health`);
      expect(own.status).toBe(200);
      expect(await own.json()).toEqual({ ok: true });
      const elsewhere = await fetch(`${t.base}/not-mcp/foo`);
      expect(elsewhere.status).toBe(404);
      expect(((await elsewhere.json()) as { jsonrpc?: string }).jsonrpc).toBeUndefined();
    });

    it('opens the notification stream for a GET without a session id', async () => {
      const controller = new AbortController();
      const res = await fetch(t.url, {
        headers: { Accept: 'text/event-stream' },
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      controller.abort();
      await res.body?.cancel().catch(() => undefined);
    });
  });

  describe(`MCP endpoint on ${platform}: shutdown`, () => {
    it('lets a call in flight finish, answers calls arriving during the drain with 503 JSON-RPC, then closes', async () => {
      const t = await startMcpTestApp({ platform, mcp: { shutdownGracePeriodMs: 2000 } });
      t.tools.register({
        name: 'drain_slow',
        description: 'Answers after 400 ms.',
        handler: async (_args, ctx: PolicedToolContext) => {
          await delay(400);
          return { finished: !ctx.signal.aborted };
        },
      });
      const call = (id: number, name: string) =>
        fetch(t.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          body: JSON.stringify(rpc(id, 'tools/call', { name, arguments: {} })),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as never }));
      const inFlight = call(1, 'drain_slow');
      await delay(100);
      const closing = t.close();
      await delay(50);
      const late = await call(2, 'drain_slow');
      expect(late.status).toBe(503);
      expect(late.body).toEqual({
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: -32000,
          message: 'Server shutting down: the call was not completed; retry it shortly.',
        },
      });
      const first = await inFlight;
      expect(first.status).toBe(200);
      expect(resultData((first.body as { result: object }).result)).toEqual({ finished: true });
      await closing;
      await expect(fetch(t.url, { method: 'POST' })).rejects.toThrow();
    });
  });
}
