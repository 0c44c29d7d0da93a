import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DemoConfigError,
  loadDemoSettings,
  loadOrCreateOperatorKey,
} from '../../src/embedded/demo-config';

describe('demo settings', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'demo-config-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('runs the embedded default with no Parse settings, keeping generated keys across starts', async () => {
    const first = await loadDemoSettings({ DATA_DIR: 'data' }, dir);
    expect(first.mode).toBe('embedded');
    expect(first.port).toBe(3000);
    const second = await loadDemoSettings({ DATA_DIR: 'data' }, dir);
    expect(second).toEqual(first);
    const saved = JSON.parse(await readFile(join(dir, 'data', 'demo-secrets.json'), 'utf8'));
    expect(saved.masterKey).toHaveLength(48);
  });

  it('serves an existing deployment when all three Parse settings are present', async () => {
    const s = await loadDemoSettings(
      {
        PARSE_SERVER_URL: 'https://parse.example.com/parse/',
        PARSE_APP_ID: 'app',
        PARSE_MASTER_KEY: 'mk',
      },
      dir,
    );
    expect(s).toMatchObject({
      mode: 'external',
      serverURL: 'https://parse.example.com/parse',
      appId: 'app',
    });
  });

  it.each([
    [{ PARSE_SERVER_URL: 'http://x/parse' }, /PARSE_APP_ID, PARSE_MASTER_KEY missing/],
    [{ PARSE_SERVER_URL: 'nope', PARSE_APP_ID: 'a', PARSE_MASTER_KEY: 'b' }, /not a valid URL/],
    [{ PARSE_SERVER_URL: 'ftp://x', PARSE_APP_ID: 'a', PARSE_MASTER_KEY: 'b' }, /http or https/],
    [{ PORT: 'abc' }, /PORT must be an integer/],
    [{ MONGODB_URI: 'mongodb://x' }, /needs PARSE_SERVER_URL/],
  ])('refuses inconsistent settings %#', async (env, message) => {
    const error = await loadDemoSettings(env as NodeJS.ProcessEnv, dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DemoConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('keeps the generated operator key in DATA_DIR, so a restart gives the same key', async () => {
    const first = await loadOrCreateOperatorKey(join(dir, 'data'));
    const second = await loadOrCreateOperatorKey(join(dir, 'data'));
    expect(second).toBe(first);
    expect(first.length).toBeGreaterThanOrEqual(16);
  });

  it('reads the rate limit, grace period and log format, refusing bad values with the variable name', async () => {
    const s = await loadDemoSettings(
      { MCP_RATE_LIMIT: '120', SHUTDOWN_GRACE_MS: '0', LOG_FORMAT: 'pretty' },
      dir,
    );
    expect(s).toMatchObject({ rateLimitPerMinute: 120, shutdownGraceMs: 0, logFormat: 'pretty' });
    await expect(loadDemoSettings({ MCP_RATE_LIMIT: 'lots' }, dir)).rejects.toThrow(
      /MCP_RATE_LIMIT must be an integer/,
    );
    await expect(loadDemoSettings({ LOG_FORMAT: 'xml' }, dir)).rejects.toThrow(DemoConfigError);
  });
});
