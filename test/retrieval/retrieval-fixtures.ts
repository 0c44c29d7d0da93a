import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { ParseAgent } from 'nestjs-parse-agent';
import type { AgentTestBed } from '../harness/agent-module';
import { createRole, createUser, type SeededUser } from '../harness/fixtures';

/** A deterministic generator of numbers in [0, 1) (a linear congruential one): seeded test data. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * `words` words drawn from `vocab`; when `extra` names a marker word, each word is that marker with
 * chance `markerRate`. Ends with a full stop.
 */
export function randomSentence(
  rand: () => number,
  vocab: readonly string[],
  words: number,
  extra: readonly string[],
  markerRate: number,
): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    out.push(
      extra.length && rand() < markerRate ? extra[0] : vocab[Math.floor(rand() * vocab.length)],
    );
  }
  return out.join(' ') + '.';
}

/** The readers of the semantic_search suites on Parse: alice, and carol in `adminRole`. */
export interface SearchReaders {
  alice: SeededUser;
  carol: SeededUser;
  adminRole: string;
}

/** Signs alice and carol up (`<tag>_alice_<run>`...) and puts carol in `<tag>_admin_<run>`. */
export async function createSearchReaders(tag: string, run: string): Promise<SearchReaders> {
  const alice = await createUser(`${tag}_alice_${run}`);
  const carol = await createUser(`${tag}_carol_${run}`);
  const adminRole = `${tag}_admin_${run}`;
  await createRole(adminRole, { users: [carol.objectId] });
  return { alice, carol, adminRole };
}

/** Agents for tenant acme: alice's, the same session on the admin tier, and carol's. */
export function searchAgents(
  bed: AgentTestBed,
  { alice, carol }: SearchReaders,
): { aliceAgent: ParseAgent; aliceAdminTier: ParseAgent; carolAgent: ParseAgent } {
  return {
    aliceAgent: bed.factory.create({ sessionToken: alice.sessionToken, tenantId: 'acme' }),
    aliceAdminTier: bed.factory.create({
      sessionToken: alice.sessionToken,
      tenantId: 'acme',
      permissions: 'admin',
    }),
    carolAgent: bed.factory.create({ sessionToken: carol.sessionToken, tenantId: 'acme' }),
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
