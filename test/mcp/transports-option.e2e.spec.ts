import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ToolListChangedNotificationSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { Test } from '@nestjs/testing';
import {
  AgentEvents,
  ParseAgentConfigError,
  ParseAgentModule,
  type ToolCallEvent,
} from 'nestjs-parse-agent';
import { StdioTransport, unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { findRows, testParseConnection } from '../harness/parse-rest';
import { seedHttpNotes, type HttpSeed } from './mcp-sdk-fixtures';
import { InProcessTransport } from './in-process-transport/in-process.transport';
import { eventually, startMcpTestApp, type McpTestApp } from './mcp-test-app';

/** The SDK client's side of a stdio pipe, over in-memory streams (the SDK's own line framing). */
class StreamClientTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  protected readonly buffer = new ReadBuffer();

  constructor(
    protected readonly toServer: Writable,
    protected readonly fromServer: Readable,
  ) {}

  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}

const textOf = (result: unknown) =>
  unwrapUntrusted(((result as { content: Array<{ text: string }> }).content ?? [])[0]?.text ?? '');

/**
 * `mcp.transports`: the module starts each transport on its shared context beside Streamable HTTP,
 * relays list changes to it and closes it on shutdown. A stdio transport driven by the official
 * SDK client, and a transport written against the public names only (in-process).
 */
describe('mcp.transports: transports the module runs beside HTTP', () => {
  let seed: HttpSeed;
  let t: McpTestApp;
  let stdio: StdioTransport;
  let inProcess: InProcessTransport;
  let client: Client;
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const events: ToolCallEvent[] = [];
  const waits: AbortSignal[] = [];

  beforeAll(async () => {
    seed = await seedHttpNotes();
    // Agent options, not agents: the module builds both with its defaults.
    stdio = new StdioTransport({
      agent: { sessionToken: seed.alice.sessionToken },
      input: toServer,
      output: fromServer,
      log: () => undefined,
    });
    inProcess = new InProcessTransport({ sessionToken: seed.bob.sessionToken });
    t = await startMcpTestApp({ mcp: { transports: [stdio, inProcess] } });
    t.app.get(AgentEvents).toolCalls$.subscribe((e) => events.push(e));
    t.tools.register({
      name: 'wait_for_abort',
      description: 'Waits until cancelled.',
      inputSchema: { type: 'object', properties: {} },
      handler: (_args, context) =>
        new Promise((resolve) => {
          waits.push(context.signal);
          context.signal.addEventListener('abort', () => resolve('aborted'));
        }),
    });
    client = new Client({ name: 'transports-e2e', version: '1.0.0' });
    await client.connect(new StreamClientTransport(toServer, fromServer));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves the SDK client over stdio as the configured user: only what Parse shows that user', async () => {
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('query_class');
    expect(tools).not.toContain('delete_object');
    const result = await client.callTool({
      name: 'query_class',
      arguments: { class_name: seed.className, keys: ['title'] },
    });
    expect(result.isError).toBeFalsy();
    const titles = (
      (JSON.parse(textOf(result)) as { results: Array<{ title: string }> }).results ?? []
    ).map((row) => row.title);
    // The truth: what Parse REST returns to the same user.
    const truth = (await findRows(seed.className, {}, { sessionToken: seed.alice.sessionToken }))
      .map((row) => row.title as string)
      .sort();
    expect(titles.sort()).toEqual(truth);
    expect(titles).toContain('alice secret');
    // The stdio call is audited like any other.
    await eventually(() =>
      expect(events).toContainEqual(
        expect.objectContaining({ tool: 'query_class', auth_type: 'session_token', success: true }),
      ),
    );
  });

  it('serves the in-process transport as its own user: bob never sees alice’s row', async () => {
    const listed = await inProcess.request({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(JSON.stringify(listed)).toContain('query_class');
    const answer = await inProcess.request({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'query_class', arguments: { class_name: seed.className, keys: ['title'] } },
    });
    const text = JSON.stringify(answer);
    expect(text).toContain('public note');
    expect(text).not.toContain('alice secret');
  });

  it('cancels the stdio call the client abandons', async () => {
    const before = waits.length;
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait_for_abort', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    await eventually(() => expect(waits.length).toBe(before + 1));
    controller.abort();
    await expect(call).rejects.toThrow();
    await eventually(() => expect(waits[before].aborted).toBe(true));
    expect(stdio.callsInFlight).toBe(0);
  });

  it('tells every transport when the tool list changes, the stdio client included', async () => {
    const heard: unknown[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => {
      heard.push(n.method);
    });
    const before = inProcess.listChanges.length;
    t.tools.register({
      name: 'added_later',
      description: 'Registered at run time.',
      inputSchema: { type: 'object', properties: {} },
      handler: () => 'ok',
    });
    await eventually(() => expect(heard).toEqual(['notifications/tools/list_changed']));
    expect(inProcess.listChanges.slice(before)).toEqual(['tools']);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('added_later');
  });

  it('keeps serving Streamable HTTP beside them', async () => {
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
    });
    expect(res.status).toBe(200);
  });

  it('closes the transports on shutdown: the stdio call in flight is cancelled, nothing is left', async () => {
    const before = waits.length;
    const call = client.callTool({ name: 'wait_for_abort', arguments: {} });
    await eventually(() => expect(waits.length).toBe(before + 1));
    expect(stdio.callsInFlight).toBe(1);
    await t.close();
    expect(waits[before].aborted).toBe(true);
    expect(stdio.callsInFlight).toBe(0);
    await expect(stdio.closed).resolves.toBeUndefined();
    await expect(inProcess.request({ jsonrpc: '2.0', id: 3, method: 'ping' })).rejects.toThrow(
      /not running/,
    );
    // A cancelled call gets no answer; closing the client settles it.
    const settled = call.catch((error: Error) => error);
    await client.close();
    expect(await settled).toBeInstanceOf(Error);
  });
});

describe('mcp.transports: what the module refuses', () => {
  const boot = async (transports: unknown[]) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          suppressSecurityBanners: true,
          startupCheck: 'off',
          agentFactory: () => ({}),
          mcp: { transports: transports as never },
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await app.init();
      return undefined;
    } catch (error) {
      return error as Error;
    } finally {
      await app.close().catch(() => undefined);
    }
  };

  it('refuses something that is no transport, naming mcp.transports', async () => {
    await expect(boot([{ kind: 'x' }])).rejects.toThrow(ParseAgentConfigError);
    await expect(boot([{ kind: 'x' }])).rejects.toThrow(
      /extras\.mcp: transports must be a list of McpTransport/,
    );
  });

  it('fails the boot when a stdio transport’s agent is refused (a bad session token), closed', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const written: string[] = [];
    output.on('data', (chunk: Buffer) => written.push(chunk.toString()));
    const stdio = new StdioTransport({
      agent: { sessionToken: 'r:not-a-session', validateSession: true },
      input,
      output,
      log: () => undefined,
    });
    const failure = await boot([stdio]);
    expect(failure?.message).toMatch(/stdio transport could not build its agent \(unauthorized/);
    input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Nothing was served: no agent, no answer.
    expect(written).toEqual([]);
    await expect(stdio.closed).resolves.toBeUndefined();
  });
});
