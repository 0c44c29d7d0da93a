import express from 'express';
import type { Server } from 'node:http';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/embedded/embedded-postgres';
import { registerTenantGuard } from '../../src/embedded/cloud/tenant-guard';
import { startParseServer, type ParseServerHost } from '../../src/embedded/parse-server-host';
import { findFreePort } from '../../src/embedded/free-port';

/** Connection facts the suites read from the environment (set by the jest global setup). */
export const TEST_ENV = {
  serverURL: 'PARSE_TEST_SERVER_URL',
  appId: 'PARSE_TEST_APP_ID',
  masterKey: 'PARSE_TEST_MASTER_KEY',
  javascriptKey: 'PARSE_TEST_JAVASCRIPT_KEY',
  databaseURI: 'PARSE_TEST_DATABASE_URI',
} as const;

export interface TestStack {
  serverURL: string;
  appId: string;
  masterKey: string;
  javascriptKey: string;
  databaseURI: string;
  stop(): Promise<void>;
}

/**
 * One real Parse Server 9 on a real PostgreSQL for the whole test run: embedded-postgres in a
 * temporary folder by default, or the database in TEST_DATABASE_URI.
 */
export async function startTestStack(): Promise<TestStack> {
  process.env.TESTING = '1';
  let postgres: RunningPostgres | undefined;
  let tmp: string | undefined;
  let databaseURI = process.env.TEST_DATABASE_URI;
  if (!databaseURI) {
    tmp = await mkdtemp(join(tmpdir(), 'parse-agent-test-'));
    await chmod(tmp, 0o755); // the postgres OS user must be able to reach its data folder
    postgres = await startEmbeddedPostgres({ dataDir: join(tmp, 'pg'), fast: true });
    databaseURI = postgres.uri;
  }
  const port = await findFreePort();
  const serverURL = `http://127.0.0.1:${port}/parse`;
  const appId = 'parse-agent-test';
  const masterKey = 'test-master-key';
  const javascriptKey = 'test-js-key';
  let parse: ParseServerHost | undefined;
  let http: Server | undefined;
  try {
    // The demo's cloud code too: the demo suites run the demo against this server.
    parse = await startParseServer({
      databaseURI,
      appId,
      masterKey,
      javascriptKey,
      serverURL,
      cloud: registerTenantGuard,
    });
    const app = express();
    app.use('/parse', parse.app);
    http = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(port, '127.0.0.1', () => resolve(s));
      s.on('error', reject);
      // Idle keep-alive sockets are closed by the clients only (fetch closes its own after 4 s):
      // a server closing them at its 5 s default races a test's fetch reusing one, a reset that
      // fails the test when the machine is loaded.
      s.keepAliveTimeout = 0;
    });
  } catch (error) {
    await parse?.shutdown().catch(() => undefined);
    await postgres?.stop().catch(() => undefined);
    throw error;
  }
  const running = http;
  const host = parse;
  return {
    serverURL,
    appId,
    masterKey,
    javascriptKey,
    databaseURI,
    stop: async () => {
      running.closeAllConnections();
      await new Promise<void>((resolve) => running.close(() => resolve()));
      await host.shutdown().catch(() => undefined);
      await postgres?.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    },
  };
}
