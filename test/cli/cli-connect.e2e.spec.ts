import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import express from 'express';
import { chmodSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { AppModule } from '../../src/example/app.module';
import { requestContextMiddleware } from '../../src/example/audit/request-context';
import { demoTestSettings, seedDemo } from '../harness/demo-data';
import { testParseConfig } from '../harness/parse-rest';
import type { McpTestApp } from '../mcp/mcp-test-app';
import {
  resultData,
  seedHttpNotes,
  startClientTestApp,
  type HttpSeed,
  type ToolProbe,
} from '../mcp/mcp-sdk-fixtures';
import { CLI_CWD, cliCommand, closedPort, runCliProcess } from './cli-process';

const API_KEY = 'connect-test-operator-key';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }> };
/** A request to /mcp; a POST without a session is an initialize (the body is left unread). */
type Seen = { method: string; session?: string; status: number };

/**
 * `parse-agent connect <url>` launched by the official MCP SDK's StdioClientTransport, relaying
 * to the demo app's own HTTP endpoint (its guard, agent factory and direct PostgreSQL path) on the
 * real Parse Server. The child gets a session token or an operator key and no Parse setting at all.
 */
describe('parse-agent connect (official MCP SDK stdio client -> demo app over HTTP)', () => {
  let app: INestApplication;
  let url: string;
  let tokens: { alice: string };
  const seen: Seen[] = [];

  beforeAll(async () => {
    tokens = await seedDemo();
    const cfg = testParseConfig();
    const module = await Test.createTestingModule({
      imports: [
        AppModule.forRoot({
          settings: demoTestSettings(),
          parseServerURL: cfg.serverURL,
          mcpApiKey: API_KEY,
          postgresURI: cfg.databaseURI,
        }),
      ],
    }).compile();
    const server = express();
    server.use(requestContextMiddleware);
    // Records what reaches /mcp: the bridge's methods, sessions and the answers' statuses.
    server.use('/mcp', (req, res, next) => {
      const entry: Seen = { method: req.method, session: req.header('mcp-session-id'), status: 0 };
      seen.push(entry);
      res.on('finish', () => (entry.status = res.statusCode));
      next();
    });
    app = module.createNestApplication(new ExpressAdapter(server), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/mcp`.replace('[::1]', '127.0.0.1');
  }, 60_000);
  afterAll(() => app?.close());

  /** Only what a desktop user has: no PARSE_SERVER_URL, app id or master key. */
  const userEnv = (extra: Record<string, string>) => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    ...extra,
  });

  async function connect(env: Record<string, string>, args: string[] = [], target = url) {
    const { command, args: argv } = cliCommand([...args, 'connect', target]);
    const transport = new StdioClientTransport({
      command,
      args: argv,
      env: userEnv(env),
      cwd: CLI_CWD,
      stderr: 'pipe',
    });
    let stderr = '';
    (transport.stderr as Readable | null)?.on('data', (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: 'connect-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, stderr: () => stderr };
  }

  const dataOf = (result: unknown) =>
    JSON.parse(unwrapUntrusted((result as ToolResult).content[0].text)) as Record<string, unknown>;

  async function waitFor<T>(probe: () => T | undefined, what: string): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('acts as the user of the session token, within her tenant, and deletes the session on exit', async () => {
    seen.length = 0;
    const { client, stderr } = await connect({ PARSE_SESSION_TOKEN: tokens.alice });
    expect(client.getServerVersion()?.name).toBe('nestjs-parse-agent');
    expect(client.getInstructions()).toBeTruthy();

    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['query_class', 'count_objects', 'group_by']));
    expect(tools).not.toContain('create_object');

    const count = await client.callTool({
      name: 'count_objects',
      arguments: { class_name: 'Order' },
    });
    expect(dataOf(count).count).toBe(1470);
    // Analytics on the app's direct PostgreSQL path: her tenant only.
    const perTenant = await client.callTool({
      name: 'group_by',
      arguments: { class_name: 'Order', field: 'tenantId' },
    });
    expect(dataOf(perTenant).groups).toEqual([{ key: 'acme', value: 1470 }]);
    // The other tenant's rows and the hidden class stay out of reach.
    const globex = (await client.callTool({
      name: 'query_class',
      arguments: { class_name: 'Order', where: { tenantId: 'globex' } },
    })) as ToolResult;
    expect(globex.isError).toBe(true);
    const hidden = (await client.callTool({
      name: 'query_class',
      arguments: { class_name: 'ApiCredential' },
    })) as ToolResult;
    expect(hidden.isError).toBe(true);
    expect(JSON.stringify(hidden)).not.toMatch(/sk_live|whsec/);

    // Every request after initialize carried the session the server issued.
    const posts = seen.filter((s) => s.method === 'POST');
    expect(posts[0]).toMatchObject({ session: undefined, status: 200 });
    const sessionId = posts[1]?.session;
    expect(sessionId).toBeTruthy();
    expect(posts.slice(1).every((s) => s.session === sessionId)).toBe(true);

    await client.close();
    const deleted = await waitFor(
      () => seen.find((s) => s.method === 'DELETE' && s.status !== 0),
      'the DELETE of the session',
    );
    expect(deleted).toMatchObject({ session: sessionId });
    expect(deleted.status).toBeLessThan(300);
    // The token never reaches the log.
    expect(stderr()).toMatch(/relaying MCP over stdio to .*\/mcp as a user \(session token\)/);
    expect(stderr()).not.toContain(tokens.alice);
  }, 60_000);

  it('reads the token from --session-token-file', async () => {
    const file = join(CLI_CWD, 'alice.token');
    writeFileSync(file, `${tokens.alice}\n`);
    chmodSync(file, 0o600);
    const { client } = await connect({}, ['--session-token-file', file]);
    const count = await client.callTool({
      name: 'count_objects',
      arguments: { class_name: 'Order' },
    });
    expect(dataOf(count).count).toBe(1470);
    await client.close();
  }, 60_000);

  it('acts as the operator with MCP_API_KEY', async () => {
    const { client } = await connect({ MCP_API_KEY: API_KEY });
    const count = await client.callTool({
      name: 'count_objects',
      arguments: { class_name: 'Order' },
    });
    expect(dataOf(count).count).toBe(2940);
    await client.close();
  }, 60_000);

  it('starts a new session when the server forgot the old one', async () => {
    seen.length = 0;
    const { client, stderr } = await connect({ PARSE_SESSION_TOKEN: tokens.alice });
    await client.listTools();
    const sessionId = seen.find((s) => s.session)!.session!;
    // The session ends behind the bridge's back (as after an idle timeout or a restart).
    const ended = await fetch(url, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${tokens.alice}`, 'Mcp-Session-Id': sessionId },
    });
    expect(ended.status).toBeLessThan(300);
    const count = await client.callTool({
      name: 'count_objects',
      arguments: { class_name: 'Order' },
    });
    expect(dataOf(count).count).toBe(1470);
    const initializes = seen.filter((s) => s.method === 'POST' && !s.session);
    expect(initializes).toHaveLength(2);
    expect(stderr()).toMatch(/no longer knows this session; starting a new one/);
    await client.close();
  }, 60_000);

  it('answers initialize with the refusal, its status and the fix for a bad token', async () => {
    await expect(connect({ PARSE_SESSION_TOKEN: 'r:not-a-session' })).rejects.toThrow(
      /Unauthorized \(HTTP 401 from http:\/\/127\.0\.0\.1:\d+\/mcp\): the credential was refused\. A user needs a current Parse session token \(PARSE_SESSION_TOKEN/,
    );
  }, 60_000);

  it('names the URL and the cause when the app cannot be reached', async () => {
    const target = `http://127.0.0.1:${await closedPort()}/mcp`;
    await expect(connect({ PARSE_SESSION_TOKEN: tokens.alice }, [], target)).rejects.toThrow(
      `Could not reach the MCP server at ${target} (ECONNREFUSED). Check the URL and that the app is running.`,
    );
  }, 60_000);

  it('refuses to start without a credential, or with two', async () => {
    const none = await runCliProcess(['connect', url], userEnv({}));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/connect needs a credential .* PARSE_SESSION_TOKEN .* MCP_API_KEY/);
    const both = await runCliProcess(
      ['connect', url],
      userEnv({ PARSE_SESSION_TOKEN: tokens.alice, MCP_API_KEY: API_KEY }),
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/Connect as one identity/);
    expect(both.stderr + none.stderr).not.toContain(tokens.alice);
  }, 30_000);

  describe('relaying SSE answers (an endpoint that streams tool calls)', () => {
    let t: McpTestApp;
    let seed: HttpSeed;
    const probe: ToolProbe = { started: 0, aborted: [] };

    beforeAll(async () => {
      seed = await seedHttpNotes();
      t = await startClientTestApp(probe);
    }, 60_000);
    afterAll(() => t?.close());

    it('passes progress notifications through before the result', async () => {
      const { client } = await connect({ PARSE_SESSION_TOKEN: seed.alice.sessionToken }, [], t.url);
      const progress: Array<{ progress: number; total?: number; message?: string }> = [];
      // The SDK client handles a notification a microtask after it reads it, but a response at
      // once: when the relay's last progress line and the result reach it in one read, it has
      // already dropped the call's progress handler and reports the notification as an error
      // instead. The line was relayed, before the result, either way; count it from either place.
      client.onerror = (error) => {
        const late = /progress notification for an unknown token: (\{.*\})$/.exec(error.message);
        if (late) progress.push((JSON.parse(late[1]) as { params: (typeof progress)[0] }).params);
      };
      try {
        const result = await client.callTool({ name: 'http_slow', arguments: {} }, undefined, {
          onprogress: (p) => progress.push(p),
        });
        expect(resultData(result)).toEqual({ done: true });
        await new Promise((resolve) => setImmediate(resolve));
        expect(
          progress.slice(-2).map(({ progress: p, total, message }) => ({ p, total, message })),
        ).toEqual([
          { p: 1, total: 2, message: 'half way' },
          { p: 2, total: 2, message: undefined },
        ]);
      } finally {
        await client.close();
      }
    }, 60_000);

    it('carries the client’s cancellation to the running tool', async () => {
      probe.aborted = [];
      probe.started = 0;
      const { client } = await connect({ PARSE_SESSION_TOKEN: seed.alice.sessionToken }, [], t.url);
      const controller = new AbortController();
      const call = client.callTool({ name: 'http_wait', arguments: {} }, undefined, {
        signal: controller.signal,
      });
      await waitFor(() => (probe.started ? true : undefined), 'the tool to start');
      controller.abort('user pressed stop');
      await expect(call).rejects.toThrow();
      await waitFor(() => (probe.aborted.length ? true : undefined), 'the tool to be aborted');
      await client.close();
    }, 60_000);
  });
});
