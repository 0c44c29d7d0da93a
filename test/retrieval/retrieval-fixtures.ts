import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Pool } from 'pg';

/** A deterministic generator of numbers in [0, 1) (a linear congruential one): seeded test data. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface PgliteVectorServer {
  /** One connection (PGlite serves one at a time): settings made with SET hold for every query. */
  pool: Pool;
  stop(): Promise<void>;
}

/**
 * PGlite (PostgreSQL in WebAssembly) with the pgvector extension, in a child process, served over
 * the PostgreSQL wire protocol by pglite-socket (pglite-pgvector-server.cjs), and a `pg` pool to it.
 */
export async function startPgliteVectorServer(): Promise<PgliteVectorServer> {
  const server = spawn(process.execPath, [join(__dirname, 'pglite-pgvector-server.cjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const conn = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    server.once('exit', (code) => reject(new Error(`the PGlite server exited (${code})`)));
  });
  const [host, port] = conn.split(':');
  const pool = new Pool({
    host,
    port: Number(port),
    user: 'postgres',
    database: 'postgres',
    max: 1,
  });
  return {
    pool,
    async stop() {
      await pool.end().catch(() => undefined);
      server.kill('SIGTERM');
    },
  };
}
