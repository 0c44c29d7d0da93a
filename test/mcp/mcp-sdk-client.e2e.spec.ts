import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  resultData,
  seedHttpNotes,
  startClientTestApp,
  type HttpSeed,
  type ToolProbe,
} from './mcp-sdk-fixtures';
import { eventually, type McpTestApp } from './mcp-test-app';

/** The official MCP TypeScript SDK (v1) client against the Nest endpoint. */
describe('MCP endpoint with the official @modelcontextprotocol/sdk client', () => {
  let t: McpTestApp;
  let seed: HttpSeed;
  const probe: ToolProbe = { started: 0, aborted: [] };
  const clients: Client[] = [];
  const clientErrors: unknown[] = [];

  beforeAll(async () => {
    seed = await seedHttpNotes();
    t = await startClientTestApp(probe);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await t.close();
  });
  beforeEach(() => {
    probe.started = 0;
    probe.aborted = [];
    clientErrors.length = 0;
  });

  async function connect(
    sessionToken: string,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: { Authorization: `Bearer ${sessionToken}` } },
    });
    const client = new Client({ name: 'parse-agent-e2e', version: '1.0.0' });
    client.onerror = (error) => clientErrors.push(error);
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  it('initializes with a session and lists tools', async () => {
    const { client, transport } = await connect(seed.alice.sessionToken);
    expect(client.getServerVersion()).toEqual(
      expect.objectContaining({ name: 'nestjs-parse-agent' }),
    );
    expect(client.getServerCapabilities()).toEqual(
      expect.objectContaining({ tools: { listChanged: true }, prompts: { listChanged: true } }),
    );
    expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['query_class', 'get_schema', 'http_slow']));
    expect(names).not.toContain('delete_object');
  });

  it('refuses a client without a token (401)', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(t.url));
    const client = new Client({ name: 'anonymous', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow();
  });

  it('scopes query_class to the caller’s session: the owner sees her row, another user does not', async () => {
    const alice = (await connect(seed.alice.sessionToken)).client;
    const bob = (await connect(seed.bob.sessionToken)).client;
    const args = { class_name: seed.className, order: 'rank' };

    const asAlice = await alice.callTool({ name: 'query_class', arguments: args });
    expect(asAlice.isError).toBe(false);
    const aliceRows = resultData(asAlice).results as Array<Record<string, unknown>>;
    expect(aliceRows.map((r) => r.title)).toEqual(['alice secret', 'public note']);

    const asBob = await bob.callTool({ name: 'query_class', arguments: args });
    expect(asBob.isError).toBe(false);
    const bobRows = resultData(asBob).results as Array<Record<string, unknown>>;
    expect(bobRows.map((r) => r.title)).toEqual(['public note']);
    expect(JSON.stringify(asBob)).not.toContain(seed.aliceRowId);
    expect(JSON.stringify(asBob)).not.toContain('alice secret');
  });

  it('lists and renders prompts', async () => {
    const { client } = await connect(seed.alice.sessionToken);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining(['parse_conventions', 'class_overview', 'count_by']),
    );
    const rendered = await client.getPrompt({
      name: 'class_overview',
      arguments: { class_name: seed.className },
    });
    expect(rendered.messages[0].role).toBe('user');
    expect(JSON.stringify(rendered.messages[0].content)).toContain(seed.className);
    await expect(client.getPrompt({ name: 'no_such_prompt' })).rejects.toThrow(/Unknown prompt/);
  });

  it('lists resources and reads a class count, scoped to the caller', async () => {
    const { client } = await connect(seed.alice.sessionToken);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toContain('parse://{className}/schema');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining([
        `parse://${seed.className}/schema`,
        `parse://${seed.className}/count`,
        `parse://${seed.className}/samples`,
      ]),
    );
    const uri = `parse://${seed.className}/count`;
    const read = await client.readResource({ uri });
    expect(read.contents[0]).toEqual(
      expect.objectContaining({ uri, mimeType: 'application/json' }),
    );
    const count = (contents: Array<Record<string, unknown>>) =>
      (JSON.parse(String(contents[0].text)) as { count: number }).count;
    expect(count(read.contents)).toBe(2);
    const bob = (await connect(seed.bob.sessionToken)).client;
    expect(count((await bob.readResource({ uri })).contents)).toBe(1);
    await expect(client.readResource({ uri: 'parse://not a class' })).rejects.toThrow();
  });

  it('delivers progress notifications during a slow tool (onprogress)', async () => {
    const { client } = await connect(seed.alice.sessionToken);
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await client.callTool({ name: 'http_slow', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(result.isError).toBe(false);
    expect(resultData(result)).toEqual({ done: true });
    const heartbeats = progress.filter((p) => p.total === undefined);
    expect(heartbeats.length).toBeGreaterThanOrEqual(1);
    expect(progress.slice(-2)).toEqual([
      { progress: 1, total: 2, message: 'half way' },
      { progress: 2, total: 2 },
    ]);
    expect(clientErrors).toEqual([]);
  });

  it('cancels a running tool when the caller aborts (notifications/cancelled)', async () => {
    const { client } = await connect(seed.alice.sessionToken);
    const controller = new AbortController();
    const pending = client.callTool({ name: 'http_wait', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    await eventually(() => expect(probe.started).toBe(1));
    controller.abort('user stop');
    await expect(pending).rejects.toThrow();
    await eventually(() => expect(probe.aborted).toEqual(['notifications_cancelled']));
  });

  it('receives tools/list_changed on its GET stream and ends the session with DELETE', async () => {
    const { client, transport } = await connect(seed.alice.sessionToken);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    // The client opens its GET stream after initialization; give it a moment to attach.
    await new Promise((resolve) => setTimeout(resolve, 200));
    t.tools.register({
      name: 'http_registered_late',
      description: 'Appears after the client connected.',
      handler: () => ({ ok: true }),
    });
    await eventually(() => expect(changed).toBeGreaterThanOrEqual(1));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('http_registered_late');

    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
  });
});
