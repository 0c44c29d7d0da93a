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

/**
 * PostgreSQL's own lock: a cluster left running by a process that did not take our lock (or an
 * older demo). Names the postmaster's PID instead of letting PostgreSQL fail without a message.
 */
export async function assertPostgresNotRunning(clusterDir: string): Promise<void> {
  const pid = await pidIn(join(clusterDir, 'postmaster.pid'));
  if (pid !== undefined && alive(pid)) {
    throw new DemoConfigError(
      `PostgreSQL is already running on ${clusterDir} (postmaster PID ${pid}). Stop it, or set DATA_DIR to another folder.`,
    );
  }
}
