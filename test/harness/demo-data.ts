import type { ExternalSettings } from '../../src/embedded/demo-config';
import { ParseAdminClient } from '../../src/embedded/seed/parse-admin-client';
import { seedDemoData } from '../../src/embedded/seed/demo-seeder';
import { resetData } from './fixtures';
import { parseRest, testParseConfig } from './parse-rest';

export const DEMO_PASSWORD = 'demo-password';

/** Wipes the database and seeds the demo dataset; returns the demo users' session tokens. */
export async function seedDemo(): Promise<{
  alice: string;
  bob: string;
  carol: string;
  admin: ParseAdminClient;
}> {
  await resetData();
  await parseRest(
    'PUT',
    '/config',
    { params: { parseAgentDemoSeedVersion: null } },
    { masterKey: true },
  );
  const cfg = testParseConfig();
  const admin = new ParseAdminClient(cfg.serverURL, cfg.appId, cfg.masterKey);
  await seedDemoData(admin, DEMO_PASSWORD);
  const login = async (username: string) =>
    (
      await parseRest<{ sessionToken: string }>('POST', '/login', {
        username,
        password: DEMO_PASSWORD,
      })
    ).sessionToken;
  return {
    alice: await login('alice'),
    bob: await login('bob'),
    carol: await login('carol'),
    admin,
  };
}

/**
 * The demo's settings pointed at the test run's Parse Server (an "existing deployment", which needs
 * its JavaScript key), for suites that boot AppModule in-process.
 */
export function demoTestSettings(): ExternalSettings {
  const cfg = testParseConfig();
  return {
    mode: 'external',
    port: 0,
    host: '127.0.0.1',
    serverURL: cfg.serverURL,
    appId: cfg.appId,
    masterKey: cfg.masterKey,
    javascriptKey: cfg.javascriptKey,
    demoPassword: 'demo-password',
    dataDir: '/nonexistent-demo-data-dir',
    rateLimitPerMinute: 60,
    shutdownGraceMs: 1000,
    logFormat: 'json',
  };
}
