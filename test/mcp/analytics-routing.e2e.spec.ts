import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AgentUnauthorizedError } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { randomBytes } from 'node:crypto';
import { createObject, createUser, pointer, type SeededUser } from '../harness/fixtures';
import { startMcpTestApp, type McpTestApp } from './mcp-test-app';

/**
 * Aggregation tools over MCP (official SDK client) on the real Parse Server, which runs on
 * PostgreSQL here and has no direct database path configured: master-key distinct goes to Parse
 * REST (correct on PostgreSQL), pipelines are never sent to Parse's PostgreSQL /aggregate, and a
 * scoped agent's aggregate is refused with how to configure a direct path, never answered unscoped.
 */
describe('aggregation routing over MCP (Parse on PostgreSQL, no direct path)', () => {
  const suffix = randomBytes(4).toString('hex');
  const orderClass = `AnOrder${suffix}`;
  const customerClass = `AnCustomer${suffix}`;
  let alice: SeededUser;
  const customers: string[] = [];
  let app: McpTestApp;
  const clients: Client[] = [];

  const factory = (req: { headers: Record<string, unknown> }) => {
    const token = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!token) throw new AgentUnauthorizedError('missing bearer token', { reason: 'no_token' });
    return token === 'master' ? { permissions: 'readonly' as const } : { sessionToken: token };
  };

  beforeAll(async () => {
    alice = await createUser(`an_alice_${suffix}`);
    for (const name of ['north', 'south'])
      customers.push(await createObject(customerClass, { name }));
    const statuses = ['paid', 'paid', 'open', 'void'];
    for (const [i, status] of statuses.entries()) {
      await createObject(orderClass, {
        status,
        amount: i + 1,
        customer: pointer(customerClass, customers[i % 2]),
      });
    }
    // A row only alice may read: the master key sees its status, and nobody sees it unscoped.
    await createObject(
      orderClass,
      { status: 'alice-only', amount: 99, customer: pointer(customerClass, customers[0]) },
      { [alice.objectId]: { read: true } },
    );
    app = await startMcpTestApp({ agentFactory: factory });
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await app?.close();
  });

  async function connect(token: string, target: McpTestApp = app): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'analytics-e2e', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const text = (result: object) =>
    (result as { content: Array<{ text: string }> }).content
      .map((c) => unwrapUntrusted(c.text))
      .join('\n');
  const data = (result: object) =>
    (JSON.parse(text(result)) as { data?: Record<string, unknown> }).data ??
    (JSON.parse(text(result)) as Record<string, unknown>);

  it('lists to the master key only the analytics tools this deployment can run for it', async () => {
    const client = await connect('master');
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    // Parse REST answers distinct for the master key; export_data's query mode reads rows.
    for (const name of ['distinct', 'export_data']) {
      expect(tools.find((t) => t.name === name)?.outputSchema).toBeDefined();
    }
    // Pipelines need a direct path (or Parse declared MongoDB); nothing here can explain.
    for (const name of ['aggregate', 'group_by', 'group_by_date', 'explain_query'])
      expect(names).not.toContain(name);
  });

  it('offers a session agent no aggregate-family tool or explain, on tools/list, list_tools and GET /tools', async () => {
    const hidden = ['aggregate', 'group_by', 'group_by_date', 'distinct', 'explain_query'];
    const client = await connect(alice.sessionToken);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['query_class', 'count_objects', 'export_data']));
    for (const name of hidden) expect(names).not.toContain(name);

    const listed = data(await client.callTool({ name: 'list_tools', arguments: {} }));
    expect((listed.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(names);

    const res = await fetch(`${app.url}/tools`, {
      headers: { Authorization: `Bearer ${alice.sessionToken}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Array<{ name: string }>).map((t) => t.name)).toEqual(names);
  });

  it('master-key distinct goes to Parse REST and answers every value, sorted', async () => {
    const client = await connect('master');
    const result = await client.callTool({
      name: 'distinct',
      arguments: { class_name: orderClass, field: 'status', sort: 'asc' },
    });
    expect(result.isError).toBe(false);
    expect(data(result)).toMatchObject({
      class_name: orderClass,
      field: 'status',
      count: 4,
      values: ['alice-only', 'open', 'paid', 'void'],
    });
  });

  it('master-key distinct on a pointer names pointer_class and returns bare objectIds', async () => {
    const client = await connect('master');
    const result = await client.callTool({
      name: 'distinct',
      arguments: { class_name: orderClass, field: 'customer' },
    });
    expect(result.isError).toBe(false);
    const d = data(result);
    expect(d.pointer_class).toBe(customerClass);
    expect([...(d.values as string[])].sort()).toEqual([...customers].sort());
  });

  it('master-key group_by is refused (Parse is not declared MongoDB and no direct path exists)', async () => {
    const client = await connect('master');
    const result = await client.callTool({
      name: 'group_by',
      arguments: { class_name: orderClass, field: 'status' },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/parse\.database is declared 'mongo'/);
    expect(text(result)).toMatch(/Configure a direct database path/);
    expect(text(result)).not.toContain('"groups"');
  });

  it('count_by renders a group_by call that the same route refuses clearly on this deployment', async () => {
    const client = await connect('master');
    const prompt = await client.getPrompt({
      name: 'count_by',
      arguments: { class_name: orderClass, group_by: 'status' },
    });
    const body = (prompt.messages[0].content as { text: string }).text;
    const call = /Call group_by with (\{.*\})\./.exec(body);
    expect(call).not.toBeNull();
    const result = await client.callTool({ name: 'group_by', arguments: JSON.parse(call![1]) });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Configure a direct database path/);
  });

  it("a session agent's aggregate, group_by and distinct, called anyway, are refused with the configure-a-direct-path message", async () => {
    const client = await connect(alice.sessionToken);
    for (const [name, args] of [
      [
        'aggregate',
        { class_name: orderClass, pipeline: [{ $group: { _id: '$status', n: { $sum: 1 } } }] },
      ],
      ['group_by', { class_name: orderClass, field: 'status' }],
      ['distinct', { class_name: orderClass, field: 'status' }],
    ] as const) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/Configure a direct database path/);
      expect(text(result)).toMatch(/only to master-key agents/);
      // The same failure shape as every tool: the code in structuredContent and in _meta.
      expect(result.structuredContent).toMatchObject({ error_code: 'invalid_configuration' });
      expect(result._meta).toMatchObject({ 'parse.error_code': 'invalid_configuration' });
      // Never answered unscoped: no rows, no status values leak into the refusal.
      expect(text(result)).not.toMatch(/alice-only|"results"|"values"/);
    }
  });

  it('explain_query is refused without a path that can explain', async () => {
    const client = await connect('master');
    const result = await client.callTool({
      name: 'explain_query',
      arguments: { class_name: orderClass, where: { status: 'paid' } },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/explain/);
  });

  it('export_data in query mode goes through Parse REST with the caller’s session (ACL applies)', async () => {
    const asAlice = await connect(alice.sessionToken);
    const mine = await asAlice.callTool({
      name: 'export_data',
      arguments: { class_name: orderClass, columns: [{ status: 'Status' }], order: 'amount' },
    });
    expect(mine.isError).toBe(false);
    expect(data(mine)).toMatchObject({ headers: ['Status'], row_count: 5 });
    expect(String(data(mine).output)).toContain('alice-only');
    const bob = await createUser(`an_bob_${suffix}`);
    const asBob = await connect(bob.sessionToken);
    const theirs = await asBob.callTool({
      name: 'export_data',
      arguments: { class_name: orderClass, format: 'markdown', row_cap: 2, order: 'amount' },
    });
    expect(data(theirs)).toMatchObject({
      row_count: 2,
      truncated: true,
      available_rows: 4,
      row_cap: 2,
    });
    expect(String(data(theirs).output)).not.toContain('alice-only');
  });
});
