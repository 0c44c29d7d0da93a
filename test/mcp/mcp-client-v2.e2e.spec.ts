import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  resultData,
  seedHttpNotes,
  startClientTestApp,
  type HttpSeed,
  type ToolProbe,
} from './mcp-sdk-fixtures';
import { eventually, type McpTestApp } from './mcp-test-app';

/** The v2 MCP TypeScript client package (@modelcontextprotocol/client) against the Nest endpoint. */
describe('MCP endpoint with the @modelcontextprotocol/client (v2) package', () => {
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
    options: ConstructorParameters<typeof Client>[1] = {},
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: { Authorization: `Bearer ${sessionToken}` } },
    });
    const client = new Client({ name: 'parse-agent-e2e-v2', version: '2.0.0' }, options);
    client.onerror = (error) => clientErrors.push(error);
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  it('initializes (negotiating a supported revision) and lists tools', async () => {
    const { client, transport } = await connect(seed.alice.sessionToken);
    expect(client.getServerVersion()).toEqual(
      expect.objectContaining({ name: 'nestjs-parse-agent' }),
    );
    expect(['2025-11-25', '2025-06-18']).toContain(transport.protocolVersion);
    expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['query_class', 'count_objects', 'http_wait']),
    );
  });

  /**
   * Alice's query_class sees her private note and the public one; Bob's sees only the public one,
   * and nothing in his result names Alice's row. Returns Bob's client for further checks.
   */
  async function expectQueryScopedToSession(
    open: (sessionToken: string) => Promise<{ client: Client }>,
  ): Promise<Client> {
    const alice = (await open(seed.alice.sessionToken)).client;
    const bob = (await open(seed.bob.sessionToken)).client;
    const query = { name: 'query_class', arguments: { class_name: seed.className, order: 'rank' } };
    const asAlice = resultData(await alice.callTool(query));
    expect((asAlice.results as Array<{ title: string }>).map((r) => r.title)).toEqual([
      'alice secret',
      'public note',
    ]);
    const asBobResult = await bob.callTool(query);
    expect(asBobResult.isError).toBe(false);
    const asBob = resultData(asBobResult);
    expect((asBob.results as Array<{ title: string }>).map((r) => r.title)).toEqual([
      'public note',
    ]);
    expect(JSON.stringify(asBobResult)).not.toContain(seed.aliceRowId);
    return bob;
  }

  it('scopes query_class and count_objects to the caller’s session token', async () => {
    const bob = await expectQueryScopedToSession((token) => connect(token));

    const count = resultData(
      await bob.callTool({ name: 'count_objects', arguments: { class_name: seed.className } }),
    );
    expect(count.count).toBe(1);
  });

  it('lists and renders prompts; lists and reads resources', async () => {
    const { client } = await connect(seed.alice.sessionToken);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining(['parse_conventions', 'recent_activity']),
    );
    const rendered = await client.getPrompt({
      name: 'recent_activity',
      arguments: { class_name: seed.className, limit: '3' },
    });
    expect(JSON.stringify(rendered.messages)).toContain(seed.className);

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(`parse://${seed.className}/schema`);
    const read = await client.readResource({ uri: `parse://${seed.className}/samples` });
    const text = String((read.contents[0] as { text?: string }).text);
    expect(text).toContain('alice secret');
  });

  it('delivers progress notifications during a slow tool, without client errors', async () => {
    const { client } = await connect(seed.alice.sessionToken);
    const progress: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool(
      { name: 'http_slow', arguments: {} },
      { onprogress: (p) => progress.push(p) },
    );
    expect(resultData(result)).toEqual({ done: true });
    expect(progress.filter((p) => p.total === undefined).length).toBeGreaterThanOrEqual(1);
    expect(progress.slice(-2)).toEqual([
      { progress: 1, total: 2, message: 'half way' },
      { progress: 2, total: 2 },
    ]);
    expect(clientErrors).toEqual([]);
  });

  it('stops a running tool when the caller aborts', async () => {
    const { client } = await connect(seed.alice.sessionToken);
    const controller = new AbortController();
    const pending = client.callTool(
      { name: 'http_wait', arguments: {} },
      { signal: controller.signal },
    );
    await eventually(() => expect(probe.started).toBe(1));
    controller.abort('user stop');
    await expect(pending).rejects.toThrow();
    // This client both drops the request's connection and sends notifications/cancelled.
    await eventually(() => expect(probe.aborted).toHaveLength(1));
    expect(['client_disconnect', 'notifications_cancelled']).toContain(probe.aborted[0]);
  });

  it('refuses a client without a token', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(t.url));
    const client = new Client({ name: 'anonymous', version: '2.0.0' });
    await expect(client.connect(transport)).rejects.toThrow();
  });

  it('hears tools/list_changed on its GET stream and sees the new tool', async () => {
    const { client } = await connect(seed.alice.sessionToken);
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    t.tools.register({
      name: 'http_v2_late',
      description: 'Appears after the v2 client connected.',
      handler: () => ({ ok: true }),
    });
    await eventually(() => expect(changed).toBeGreaterThanOrEqual(1));
    const { tools } = await client.listTools(undefined, { cacheMode: 'bypass' });
    expect(tools.map((tool) => tool.name)).toContain('http_v2_late');
  });

  it('ends its session with DELETE', async () => {
    const { transport } = await connect(seed.alice.sessionToken);
    expect(transport.sessionId).toBeDefined();
    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
  });

  describe('speaking 2026-07-28 (server/discover, no session, subscriptions/listen)', () => {
    async function connectModern(sessionToken: string) {
      return connect(sessionToken, { versionNegotiation: { mode: 'auto' } });
    }

    it('discovers the server and chooses the new revision, with no session', async () => {
      const { client, transport } = await connectModern(seed.alice.sessionToken);
      expect(transport.protocolVersion).toBe('2026-07-28');
      expect(transport.sessionId).toBeUndefined();
      expect(client.getServerVersion()).toEqual(
        expect.objectContaining({ name: 'nestjs-parse-agent' }),
      );
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      const discovered = await client.discover();
      expect(discovered.supportedVersions).toEqual(
        expect.arrayContaining(['2026-07-28', '2025-06-18']),
      );
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['query_class', 'count_objects']),
      );
      expect(clientErrors).toEqual([]);
    });

    it('scopes tools/call to the caller’s session token', async () => {
      await expectQueryScopedToSession(connectModern);
    });

    it('hears tools/list_changed on subscriptions/listen only for what it asked', async () => {
      const { client } = await connectModern(seed.alice.sessionToken);
      let toolsChanged = 0;
      let promptsChanged = 0;
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        toolsChanged++;
      });
      client.setNotificationHandler('notifications/prompts/list_changed', () => {
        promptsChanged++;
      });
      const subscription = await client.listen({
        toolsListChanged: true,
        resourcesListChanged: true,
      });
      // Resource lists never change here: that part of the filter is not acknowledged.
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      t.tools.register({
        name: 'http_v2_modern_late',
        description: 'Appears after the 2026-07-28 client subscribed.',
        handler: () => ({ ok: true }),
      });
      await eventually(() => expect(toolsChanged).toBeGreaterThanOrEqual(1));
      expect(promptsChanged).toBe(0);
      const { tools } = await client.listTools(undefined, { cacheMode: 'bypass' });
      expect(tools.map((tool) => tool.name)).toContain('http_v2_modern_late');
      await subscription.close();
      expect(clientErrors).toEqual([]);
    });
  });
});
