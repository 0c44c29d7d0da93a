import { mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DemoConfigError } from './demo-config';

export interface DataDirLock {
  release(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function pidIn(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const pid = Number(text.split('\n', 1)[0].trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * One demo per DATA_DIR: its PostgreSQL cluster and keys cannot be shared. A stale lock (its
 * process gone) is taken over; a live one is a clear error naming the PID.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, 'demo.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      // Best effort on a crash-free exit too, so the next start does not have to check the PID.
      const onExit = () => {
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      };
      process.once('exit', onExit);
      return {
        release: async () => {
          process.off('exit', onExit);
          await unlink(file).catch(() => undefined);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = await pidIn(file);
      if (pid !== undefined && pid !== process.pid && alive(pid)) {
        throw new DemoConfigError(
          `The data directory ${dataDir} is in use by another demo process (PID ${pid}). Stop that process, or set DATA_DIR to another folder.`,
        );
      }
      await unlink(file).catch(() => undefined); // stale: its process is gone
    }
  }
  throw new DemoConfigError(
    `Could not lock the data directory ${dataDir}: another process keeps creating ${file}.`,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The command line of a running process (Linux /proc); undefined where it cannot be read. */
async function commandLine(pid: number): Promise<string[] | undefined> {
  const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return raw ? raw.split('\0').filter(Boolean) : undefined;
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(100)) {
    if (!alive(pid)) return true;
  }
  return !alive(pid);
}

/**
 * PostgreSQL's own lock. Called once this process holds the demo lock, so no live demo uses the
 * cluster: a postmaster still running on it was left behind by a demo that crashed (killed before
 * it could stop PostgreSQL). That one is stopped (fast shutdown, then immediate) and start-up goes
 * on. One that is not the demo's own (another command line) is a clear error naming its PID.
 * Resolves to the PID that was stopped, if any.
 */
export async function stopStalePostgres(clusterDir: string): Promise<number | undefined> {
  const pid = await pidIn(join(clusterDir, 'postmaster.pid'));
  if (pid === undefined || !alive(pid)) return undefined;
  const running = () =>
    new DemoConfigError(
      `PostgreSQL is already running on ${clusterDir} (postmaster PID ${pid}) and it is not one a demo left behind. Stop it, or set DATA_DIR to another folder.`,
    );
  const argv = await commandLine(pid);
  // Where /proc is missing (macOS) the lock we hold is the evidence; on Linux, check it is the
  // embedded server on this very folder.
  const dataDirAt = argv?.indexOf('-D') ?? -1;
  if (
    argv &&
    !(dataDirAt >= 0 && argv[dataDirAt + 1] === clusterDir && /postgres$/.test(argv[0]))
  ) {
    throw running();
  }
  for (const signal of ['SIGINT', 'SIGQUIT'] as const) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
      throw running(); // EPERM: another user's server
    }
    if (await waitForExit(pid, signal === 'SIGINT' ? 15_000 : 5_000)) return pid;
  }
  throw new DemoConfigError(
    `PostgreSQL left running on ${clusterDir} by a crashed demo (postmaster PID ${pid}) did not stop. Stop it (kill ${pid}), then start the demo again.`,
  );
}
