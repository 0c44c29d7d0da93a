import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seedDemo } from '../harness/demo-data';
import {
  CLI_CWD,
  cliCommand,
  cliEnv,
  DEMO_MODELS,
  runCliProcess,
  type CliRun,
} from './cli-process';

/** Runs the CLI with `input` piped to its stdin (then closed). */
function runWithStdin(args: string[], input: string, env = cliEnv()): Promise<CliRun> {
  const { command, args: argv } = cliCommand(args);
  const child = spawn(command, argv, { env, cwd: CLI_CWD });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(input);
  return new Promise((done) =>
    child.on('exit', (code) => done({ code: code ?? -1, stdout, stderr })),
  );
}

/**
 * Where the CLI takes a session token from: the environment, a file or stdin keep it out of the
 * process list; a token on argv still works but is warned about. The token is never printed.
 */
describe('parse-agent secrets (child process, real Parse Server)', () => {
  let token: string;
  const argvWarning = /warning: --session-token puts the token on the command line/;

  beforeAll(async () => {
    token = (await seedDemo()).alice;
  }, 60_000);

  const actingAs = (run: CliRun) => (JSON.parse(run.stdout) as { acting_as: string }).acting_as;
  const expectNoToken = (run: CliRun) => {
    expect(run.stdout).not.toContain(token);
    expect(run.stderr).not.toContain(token);
  };

  it('takes the token from PARSE_SESSION_TOKEN without a warning', async () => {
    const run = await runCliProcess(['describe'], cliEnv({ PARSE_SESSION_TOKEN: token }));
    expect(run.code).toBe(0);
    expect(actingAs(run)).toBe('alice (session)');
    expect(run.stderr).not.toMatch(/warning/);
    expectNoToken(run);
  }, 30_000);

  it('takes the token from --session-token-file, and warns when others can read the file', async () => {
    const file = join(CLI_CWD, 'alice.session');
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    const run = await runCliProcess(['--session-token-file', file, 'describe']);
    expect(run.code).toBe(0);
    expect(actingAs(run)).toBe('alice (session)');
    expect(run.stderr).not.toMatch(/warning/);
    expectNoToken(run);

    chmodSync(file, 0o644);
    const open = await runCliProcess(['--session-token-file', file, 'describe']);
    expect(open.code).toBe(0);
    expect(open.stderr).toMatch(/can be read by other users \(mode 644\); chmod 600 it/);
    expectNoToken(open);
  }, 30_000);

  it('takes the token from stdin with --session-token-file -', async () => {
    const run = await runWithStdin(['--session-token-file', '-', 'describe'], `${token}\n`);
    expect(run.code).toBe(0);
    expect(actingAs(run)).toBe('alice (session)');
    expect(run.stderr).not.toMatch(/warning/);
    expectNoToken(run);
    const call = await runWithStdin(
      [
        ...['--models', DEMO_MODELS, '--session-token-file', '-'],
        ...['call', 'count_objects', '{"class_name":"Order"}'],
      ],
      token, // no line break: the end of stdin ends the token
      cliEnv({ PARSE_AGENT_TENANT_ID: 'acme' }),
    );
    expect(call.stderr).toBe('');
    expect(call.code).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ success: true, data: { count: 1470 } });
  }, 30_000);

  it('still takes --session-token on argv, but warns and names the safer ways', async () => {
    const run = await runCliProcess(['--session-token', token, 'describe']);
    expect(run.code).toBe(0);
    expect(actingAs(run)).toBe('alice (session)');
    expect(run.stderr).toMatch(argvWarning);
    expect(run.stderr).toMatch(/PARSE_SESSION_TOKEN/);
    expect(run.stderr).toMatch(/--session-token-file <path> \('-' reads it from stdin\)/);
    expectNoToken(run);
  }, 30_000);

  it('refuses unusable sources with exit 2 and never echoes the token', async () => {
    const both = await runCliProcess([
      '--session-token',
      token,
      '--session-token-file',
      '-',
      'tools',
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/one way/);
    expectNoToken(both);

    const missing = await runCliProcess(['--session-token-file', join(CLI_CWD, 'nope'), 'tools']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope: no such file/);

    const stdio = await runWithStdin(['--session-token-file', '-', 'stdio'], `${token}\n`);
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toMatch(/cannot read stdin here: stdio reads JSON-RPC from it/);
    expect(stdio.stdout).toBe('');
    expectNoToken(stdio);

    const bogus = 'r:bogus-secret-token-value';
    const refused = await runWithStdin(['--session-token-file', '-', 'describe'], `${bogus}\n`);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/session token was refused/);
    expect(refused.stdout + refused.stderr).not.toContain(bogus);
  }, 60_000);

  it('documents the sources in --help', async () => {
    const run = await runCliProcess(['--help'], {});
    expect(run.stdout).toMatch(/--session-token-file <path>/);
    expect(run.stdout).toMatch(/other local\s+users can read it/);
  }, 30_000);
});
