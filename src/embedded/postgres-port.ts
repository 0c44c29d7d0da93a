import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { findFreePort } from './free-port';

/** Where the port of a DATA_DIR's PostgreSQL is kept. */
const PORT_FILE = 'postgres-port';

function isFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The port for the demo's PostgreSQL: the one this DATA_DIR used last, so the URI in the banner
 * (and in a desktop client's stdio config, as POSTGRES_URI) stays valid across restarts; a new one
 * the first time, or when another program took it meanwhile (`moved` then says from which).
 */
export async function postgresPortFor(dataDir: string): Promise<{ port: number; moved?: number }> {
  const file = join(dataDir, PORT_FILE);
  const kept = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  const valid = Number.isInteger(kept) && kept > 0 && kept < 65536;
  if (valid && (await isFree(kept))) return { port: kept };
  const port = await findFreePort();
  await writeFile(file, `${port}\n`);
  return valid ? { port, moved: kept } : { port };
}
