import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_PASSWORD, seedDemo } from '../harness/demo-data';
import { CLI_CWD, cliCommand, cliEnv, DEMO_MODELS, runCliProcess } from './cli-process';

const COMMANDS = ['chat', 'call', 'tools', 'describe', 'console', 'serve', 'stdio'];

/** The one-shot commands (`tools`, `call`, `describe`) as child processes on the real Parse Server. */
describe('parse-agent one-shot commands (child process, real Parse Server)', () => {
  let tokens: { alice: string };
  const models = ['--models', DEMO_MODELS];

  beforeAll(async () => {
    tokens = await seedDemo();
  }, 60_000);

  const asAlice = (extra: Record<string, string> = {}) =>
    cliEnv({ PARSE_SESSION_TOKEN: tokens.alice, PARSE_AGENT_TENANT_ID: 'acme', ...extra });

  it('tools --json lists what a readonly identity may call, and nothing above its tier', async () => {
    const run = await runCliProcess([...models, 'tools', '--json'], asAlice());
    expect(run.code).toBe(0);
    const tools = JSON.parse(run.stdout) as Array<Record<string, string>>;
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['query_class', 'count_objects', 'get_schema']));
    expect(names).not.toContain('create_object');
    expect(tools.every((t) => t.permission === 'readonly' && t.category && t.description)).toBe(
      true,
    );
  }, 30_000);

  it('call prints the envelope as JSON, scoped to the user and tenant', async () => {
    const alice = await runCliProcess(
      [...models, 'call', 'count_objects', '{"class_name":"Order"}'],
      asAlice(),
    );
    expect(alice.code).toBe(0);
    expect(JSON.parse(alice.stdout)).toEqual({
      success: true,
      data: expect.objectContaining({ count: 1470 }),
    });
    const operator = await runCliProcess(
      [...models, 'call', 'count_objects', '{"class_name":"Order"}'],
      cliEnv(),
    );
    expect(JSON.parse(operator.stdout).data.count).toBe(2940);
    // The operator acts with the master key, and is told so on stderr, never on stdout.
    expect(operator.stderr).toMatch(/master key/);
  }, 30_000);

  it('call --table renders the rows', async () => {
    const run = await runCliProcess(
      [
        ...models,
        'call',
        'query_class',
        '{"class_name":"Order","limit":3,"keys":["tenantId","status"]}',
        '--table',
      ],
      asAlice(),
    );
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(
      expect.arrayContaining(['tenantId', 'status', 'objectId']),
    );
    expect(lines[1]).toMatch(/^-+\s+-+/);
    expect(lines.slice(2)).toHaveLength(3);
    expect(lines.slice(2).every((l) => /\bacme\b/.test(l) && !/globex/.test(l))).toBe(true);
  }, 30_000);

  it('call exits 1 on a refused tool call, without leaking the hidden class', async () => {
    const run = await runCliProcess(
      [...models, 'call', 'query_class', '{"class_name":"ApiCredential"}'],
      asAlice(),
    );
    expect(run.code).toBe(1);
    const envelope = JSON.parse(run.stdout);
    expect(envelope.success).toBe(false);
    expect(envelope.error_code).toBeDefined();
    expect(run.stdout + run.stderr).not.toMatch(/sk_live|whsec/);
  }, 30_000);

  it('call exits 2 with a fix-it message for arguments that are not a JSON object', async () => {
    const bad = await runCliProcess(['call', 'count_objects', '{class_name:Order}'], asAlice());
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/not valid JSON.*'\{"class_name":"Order"\}'/);
    const array = await runCliProcess(['call', 'count_objects', '[1]'], asAlice());
    expect(array.code).toBe(2);
    expect(array.stderr).toMatch(/must be a JSON object/);
  }, 30_000);

  it('describe shows the identity, its tenant and what it sees of a class', async () => {
    const agent = await runCliProcess([...models, 'describe'], asAlice());
    expect(agent.code).toBe(0);
    expect(JSON.parse(agent.stdout)).toEqual(
      expect.objectContaining({
        acting_as: 'alice (session)',
        auth_type: 'session_token',
        using_master_key: false,
        tenant_id: 'acme',
        permissions: 'readonly',
      }),
    );
    expect(agent.stdout).not.toContain(tokens.alice);
    const order = await runCliProcess([...models, 'describe', 'Order'], asAlice());
    expect(JSON.parse(order.stdout)).toEqual(
      expect.objectContaining({ class_name: 'Order', accessible: 'permitted' }),
    );
    const hidden = await runCliProcess([...models, 'describe', 'ApiCredential'], asAlice());
    expect(JSON.parse(hidden.stdout)).toEqual(
      expect.objectContaining({ class_name: 'ApiCredential', accessible: 'denied' }),
    );
  }, 30_000);

  it('logs in with username and password from the environment or a .env file', async () => {
    const env = cliEnv({ PARSE_USERNAME: 'alice', PARSE_PASSWORD: DEMO_PASSWORD });
    const run = await runCliProcess(['describe'], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).acting_as).toBe('alice (logged in)');

    const wrong = await runCliProcess(
      ['describe'],
      cliEnv({ PARSE_USERNAME: 'alice', PARSE_PASSWORD: 'nope' }),
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/Could not log in as alice/);
    expect(wrong.stderr).not.toContain('nope');

    const file = join(CLI_CWD, 'alice.env');
    writeFileSync(file, `PARSE_USERNAME=alice\nPARSE_PASSWORD=${DEMO_PASSWORD}\n`);
    const fromFile = await runCliProcess(['--env-file', file, 'describe'], cliEnv());
    expect(JSON.parse(fromFile.stdout).acting_as).toBe('alice (logged in)');
  }, 30_000);

  it('names the missing settings and exits 2', async () => {
    const env = cliEnv();
    delete env.PARSE_MASTER_KEY;
    const run = await runCliProcess(['tools'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Set PARSE_MASTER_KEY/);
    const both = await runCliProcess(
      ['tools'],
      cliEnv({ PARSE_SESSION_TOKEN: 'r:x', PARSE_USERNAME: 'alice' }),
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/one identity/);
  }, 30_000);

  it('has --help with an example on every command', async () => {
    for (const command of COMMANDS) {
      const run = await runCliProcess([command, '--help'], {});
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`Usage: parse-agent ${command}`));
      expect(run.stdout).toMatch(/Example/);
    }
  }, 60_000);

  it('serve runs the standalone HTTP server as the given user until SIGTERM', async () => {
    const { command, args } = cliCommand([...models, 'serve', '--port', '0']);
    const child = spawn(command, args, { env: asAlice(), cwd: CLI_CWD });
    let stderr = '';
    const listening = new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const url = /MCP server listening on (http:\/\/\S+)\/mcp as alice \(session\)/.exec(stderr);
        if (url) resolve(url[1]);
      });
      child.on('exit', () => reject(new Error(`serve exited early:\n${stderr}`)));
    });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      const url = await listening;
      expect(await (await fetch(`${url}/health`)).json()).toEqual({
        status: 'ok',
        mcp_enabled: true,
      });
      const tools = (await (await fetch(`${url}/tools`)).json()) as Array<{ name: string }>;
      expect(tools.map((t) => t.name)).toContain('query_class');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 60_000);

  it('serve names LOG_FORMAT when it is neither json nor pretty', async () => {
    const run = await runCliProcess(['serve', '--port', '0'], cliEnv({ LOG_FORMAT: 'xml' }));
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain('LOG_FORMAT must be "json" or "pretty", got "xml".');
  }, 60_000);

  it('serve refuses to listen beyond loopback without an API key', async () => {
    const run = await runCliProcess(['serve', '--host', '0.0.0.0', '--port', '0'], cliEnv());
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/refusing to listen on "0\.0\.0\.0" without an API key/);
  }, 60_000);
});
