import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { createObject } from '../harness/fixtures';
import { parseRest } from '../harness/parse-rest';
import { resultData } from './mcp-sdk-fixtures';
import { startMcpTestApp, type McpTestApp } from './mcp-test-app';

const GATES = ['PARSE_AGENT_ALLOW_WRITE_TOOLS', 'PARSE_AGENT_ALLOW_RAW_CRUD'] as const;

/**
 * Confirmation of destructive calls through MCP elicitation, with the official SDK client: the
 * server asks on the call's SSE stream, the client answers with a POST.
 */
describe('confirmations through MCP elicitation (official SDK client)', () => {
  let t: McpTestApp;
  let className: string;
  const clients: Client[] = [];
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const g of GATES) {
      saved[g] = process.env[g];
      process.env[g] = 'true';
    }
    className = `Disposable${randomBytes(4).toString('hex')}`;
    t = await startMcpTestApp({
      // An operator agent: admin tier, master key. `X-Confirm: off` plays an operator who
      // switched confirmation off.
      agentFactory: (req) => ({
        permissions: 'admin',
        confirmationRequired: req.headers['x-confirm'] !== 'off',
      }),
    });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await t.close();
    for (const g of GATES) {
      if (saved[g] === undefined) delete process.env[g];
      else process.env[g] = saved[g];
    }
  });

  async function connect(
    answer?: (message: string) => ElicitResult,
    headers: Record<string, string> = {},
  ): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers },
    });
    const client = new Client(
      { name: 'elicitation-e2e', version: '1.0.0' },
      { capabilities: answer ? { elicitation: {} } : {} },
    );
    if (answer) {
      client.setRequestHandler(ElicitRequestSchema, (request) =>
        Promise.resolve(answer(request.params.message)),
      );
    }
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const exists = (id: string) =>
    parseRest('GET', `/classes/${className}/${id}`, undefined, { masterKey: true }).then(
      () => true,
      () => false,
    );

  it('deletes after the person accepts, and says what it asked', async () => {
    const id = await createObject(className, { label: 'accept me' });
    const asked: string[] = [];
    const client = await connect((message) => {
      asked.push(message);
      return { action: 'accept', content: { confirm: true } };
    });
    const result = await client.callTool({
      name: 'delete_object',
      arguments: { class_name: className, object_id: id },
    });
    expect(result.isError).toBeFalsy();
    expect(resultData(result)).toMatchObject({ deleted: true, object_id: id });
    expect(asked).toEqual([expect.stringContaining(`Delete ${className} ${id}`)]);
    expect(await exists(id)).toBe(false);
  });

  it('keeps the row when the person declines', async () => {
    const id = await createObject(className, { label: 'decline me' });
    const client = await connect(() => ({ action: 'decline' }));
    const result = await client.callTool({
      name: 'delete_object',
      arguments: { class_name: className, object_id: id },
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('did not confirm');
    expect(await exists(id)).toBe(true);
  });

  it('refuses clearly when the client cannot ask, unless confirmation is switched off', async () => {
    const id = await createObject(className, { label: 'no elicitation' });
    const client = await connect();
    const result = await client.callTool({
      name: 'delete_object',
      arguments: { class_name: className, object_id: id },
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('elicitation');
    expect(await exists(id)).toBe(true);

    const relaxed = await connect(undefined, { 'X-Confirm': 'off' });
    const done = await relaxed.callTool({
      name: 'delete_object',
      arguments: { class_name: className, object_id: id },
    });
    expect(done.isError).toBeFalsy();
    expect(await exists(id)).toBe(false);
  });

  it('announces what each write tool does in its annotations', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool.annotations]));
    expect(byName.get('query_class')).toMatchObject({ readOnlyHint: true });
    expect(byName.get('delete_object')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(byName.get('create_object')).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
    });
    expect(byName.get('call_method')).toMatchObject({ readOnlyHint: false });
  });
});
