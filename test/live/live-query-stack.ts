import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { findFreePort } from '../../src/embedded/free-port';
import { testParseConfig } from '../harness/parse-rest';

export interface LiveQueryCounts {
  sockets: number;
  subscriptions: number;
  master: number;
}

export interface LiveQueryStack {
  /** http://127.0.0.1:<port>/parse: Parse REST and, on the same HTTP server, LiveQuery. */
  serverURL: string;
  appId: string;
  masterKey: string;
  javascriptKey: string;
  /** What the LiveQuery server holds: all sockets, or those of one session token. */
  counts(sessionToken?: string): Promise<LiveQueryCounts>;
  /** Cuts every LiveQuery socket, as a LiveQuery restart does. */
  dropSockets(): Promise<void>;
  /** Parse REST answers 503 for `ms` (LiveQuery keeps running). */
  restDown(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A Parse Server with LiveQuery for `classNames` on the test run's database, in a child process
 * (live-query-server.child.ts): writes through its /parse reach its LiveQuery subscribers, and the
 * suite counts what its LiveQuery server holds. `redisURL` connects LiveQuery servers through
 * Parse's own Redis pub/sub.
 */
export async function startLiveQueryStack(
  classNames: string[],
  options: { redisURL?: string } = {},
): Promise<LiveQueryStack> {
  const cfg = testParseConfig();
  const port = await findFreePort();
  const root = join(__dirname, '..', '..');
  const child = spawn(
    process.execPath,
    [
      '-r',
      join(root, 'test/harness/ts-register.js'),
      join(__dirname, 'live-query-server.child.ts'),
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        LISTEN_PORT: String(port),
        LIVE_CLASSES: classNames.join(','),
        LIVE_REDIS_URL: options.redisURL ?? '',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the LiveQuery server did not start within 60 s:\n${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/LISTENING \d+/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`the LiveQuery server exited:\n${output}`));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const control = async (path: string) => {
    const res = await fetch(`${base}${path}`, { method: 'POST' });
    if (!res.ok) throw new Error(`${path}: ${res.status}`);
  };
  return {
    serverURL: `${base}/parse`,
    appId: cfg.appId,
    masterKey: cfg.masterKey,
    javascriptKey: cfg.javascriptKey,
    counts: async (token) =>
      (await (
        await fetch(`${base}/__live/stats${token ? `?token=${encodeURIComponent(token)}` : ''}`)
      ).json()) as LiveQueryCounts,
    dropSockets: () => control('/__live/drop'),
    restDown: (ms) => control(`/__live/rest-down?ms=${ms}`),
    stop: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
