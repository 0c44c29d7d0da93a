import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { seedDemo } from '../harness/demo-data';
import { CLI_CWD, cliCommand, cliEnv, DEMO_MODELS } from './cli-process';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }> };

function collect(stream: Readable | null): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return () => text;
}

/**
 * `parse-agent stdio` launched as a child process by the official MCP SDK's StdioClientTransport,
 * against the real Parse Server with the demo's models.
 */
describe('parse-agent stdio (official MCP SDK client over a child process)', () => {
  let tokens: { alice: string };

  beforeAll(async () => {
    tokens = await seedDemo();
  }, 60_000);

  async function connect(extraEnv: Record<string, string>, args: string[] = []) {
    const { command, args: argv } = cliCommand(['--models', DEMO_MODELS, ...args, 'stdio']);
    const transport = new StdioClientTransport({
      command,
      args: argv,
      env: cliEnv(extraEnv),
      cwd: CLI_CWD,
      stderr: 'pipe',
    });
    const stderr = collect(transport.stderr as Readable | null);
    const transportErrors: Error[] = [];
    transport.onerror = (error) => transportErrors.push(error);
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, stderr, transportErrors };
  }

  it('initializes, lists the tools and scopes a query to the session’s user and tenant', async () => {
    const { client, stderr, transportErrors } = await connect(
      { PARSE_SESSION_TOKEN: tokens.alice },
      ['--tenant', 'acme'],
    );
    expect(client.getServerVersion()?.name).toBe('nestjs-parse-agent');

    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['query_class', 'count_objects', 'get_schema']));
    expect(tools).not.toContain('create_object');

    const query = (await client.callTool({
      name: 'query_class',
      arguments: { class_name: 'Order', limit: 50, keys: ['tenantId', 'total'] },
    })) as ToolResult;
    expect(query.isError).toBeFalsy();
    const rows = JSON.parse(unwrapUntrusted(query.content[0].text)).results as Array<{
      tenantId: string;
    }>;
    expect(rows.length).toBe(50);
    expect(rows.every((r) => r.tenantId === 'acme')).toBe(true);

    const count = (await client.callTool({
      name: 'count_objects',
      arguments: { class_name: 'Order' },
    })) as ToolResult;
    expect(JSON.parse(unwrapUntrusted(count.content[0].text)).count).toBe(1470);

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

    await client.close();
    // A line that was not JSON-RPC would have been reported here by the SDK.
    expect(transportErrors).toEqual([]);
    expect(stderr()).toMatch(/MCP over stdio as alice \(session\)/);
  }, 60_000);

  it('writes nothing but JSON-RPC lines on stdout, answers bad input and exits when stdin ends', async () => {
    const { command, args } = cliCommand(['--models', DEMO_MODELS, 'stdio']);
    const child = spawn(command, args, {
      env: cliEnv({ PARSE_SESSION_TOKEN: tokens.alice, PARSE_AGENT_TENANT_ID: 'acme' }),
      cwd: CLI_CWD,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout = collect(child.stdout);
    const stderr = collect(child.stderr);
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const send = (message: unknown) =>
      child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n');
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send('this is not json');
    send({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'count_objects' } });
    // One message split across writes still arrives as one line.
    const split = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'count_objects', arguments: { class_name: 'Customer' } },
    });
    child.stdin.write(split.slice(0, 20));
    child.stdin.write(split.slice(20) + '\n');
    child.stdin.end();
    expect(await exited).toBe(0);

    const lines = stdout().split('\n').filter(Boolean);
    const messages = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
    const byId = (id: unknown) => messages.find((m) => m.id === id);
    expect((byId(1)!.result as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
    expect(messages).toContainEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
    // A call missing a required argument is a failed tool call the model can read and fix.
    const missing = byId('c')!.result as ToolResult;
    expect(missing.isError).toBe(true);
    expect(missing.content[0].text).toMatch(/class_name/);
    const customers = byId(2)!.result as ToolResult;
    expect(customers.isError).toBeFalsy();
    expect(JSON.parse(unwrapUntrusted(customers.content[0].text)).count).toBeGreaterThan(0);
    // The notification got no answer: five inputs, four replies.
    expect(messages).toHaveLength(4);
    expect(stderr()).toMatch(/MCP over stdio/);
  }, 60_000);

  it('refuses to start, on stderr and with exit code 2, when the session token is bad', async () => {
    const { command, args } = cliCommand(['stdio']);
    const child = spawn(command, args, {
      env: cliEnv({ PARSE_SESSION_TOKEN: 'r:not-a-session' }),
      cwd: CLI_CWD,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout = collect(child.stdout);
    const stderr = collect(child.stderr);
    const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
    expect(code).toBe(2);
    expect(stdout()).toBe('');
    expect(stderr()).toMatch(/session token was refused/);
  }, 60_000);
});
