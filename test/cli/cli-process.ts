import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { testParseConfig } from '../harness/parse-rest';

const ROOT = resolve(__dirname, '../..');

/** The `parse-agent` bin entry, run from the TypeScript sources (no build step needed). */
export const CLI_ENTRY = join(ROOT, 'libs/parse-agent/src/cli.main.ts');
export const TS_REGISTER = join(ROOT, 'test/harness/register-ts.cjs');
/** The demo's decorated models, loaded with --models (tenant scopes, hidden classes). */
export const DEMO_MODELS = join(ROOT, 'src/example/models/index.ts');

/** A working directory without a .env, so only the variables a test passes count. */
export const CLI_CWD = mkdtempSync(join(tmpdir(), 'parse-agent-cli-'));

/** node + arguments that launch the CLI with the given arguments. */
export function cliCommand(args: string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: ['-r', TS_REGISTER, CLI_ENTRY, ...args] };
}

/** The test Parse Server's settings as the CLI reads them, and nothing else from this process. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const cfg = testParseConfig();
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    PARSE_SERVER_URL: cfg.serverURL,
    PARSE_APP_ID: cfg.appId,
    PARSE_MASTER_KEY: cfg.masterKey,
    PARSE_JAVASCRIPT_KEY: cfg.javascriptKey,
    ...extra,
  };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one CLI command to completion. */
export function runCliProcess(
  args: string[],
  env: Record<string, string> = cliEnv(),
): Promise<CliRun> {
  const { command, args: argv } = cliCommand(args);
  return new Promise((done) => {
    execFile(command, argv, { env, cwd: CLI_CWD, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Runs one CLI command with `input` piped to its stdin (then closed). */
export function runCliWithInput(
  args: string[],
  env: Record<string, string>,
  input: string,
): Promise<CliRun> {
  const { command, args: argv } = cliCommand(args);
  return new Promise((done) => {
    const child = execFile(
      command,
      argv,
      { env, cwd: CLI_CWD, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin?.end(input);
  });
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
