import { Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ParseAgentConfigError,
  ParseAgentModule,
  ParseAgentStartupCheck,
  type ParseAgentModuleExtras,
  type ParseAgentModuleOptions,
} from 'nestjs-parse-agent';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { findFreePort } from '../../src/embedded/free-port';
import { testParseConfig, testParseConnection } from '../harness/parse-rest';

/**
 * The start-up check against the test run's real Parse Server and PostgreSQL: a wrong setting
 * fails the boot with one message naming it (and never quoting a secret), a healthy boot logs no
 * alarm, and a Parse Server that starts listening after the module booted is waited for quietly.
 */
describe('start-up check (real Parse Server and PostgreSQL)', () => {
  let warn: jest.SpyInstance;
  let error: jest.SpyInstance;
  let log: jest.SpyInstance;
  let app: INestApplication | undefined;

  beforeAll(() => suppressSecurityBanners());
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    await app?.close().catch(() => undefined);
    app = undefined;
    jest.restoreAllMocks();
  });

  const lines = (spy: jest.SpyInstance) => spy.mock.calls.map((args) => String(args[0]));

  /** Boots the module; resolves to the boot error, or undefined when it booted. */
  async function boot(
    options: Partial<ParseAgentModuleOptions & ParseAgentModuleExtras>,
  ): Promise<Error | undefined> {
    const module = await Test.createTestingModule({
      imports: [ParseAgentModule.forRoot({ parse: testParseConnection(), ...options })],
    }).compile();
    app = module.createNestApplication({ logger: false });
    return app.init().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
  }

  const pgWithout = (path: string) => {
    const url = new URL(testParseConfig().databaseURI);
    url.pathname = path;
    return url.toString();
  };

  it('boots with the right settings, logs no warning or error, and is ready', async () => {
    const failure = await boot({ postgres: { uri: testParseConfig().databaseURI } });
    expect(failure).toBeUndefined();
    const check = app!.get(ParseAgentStartupCheck);
    await expect(check.ready()).resolves.toBeUndefined();
    expect(check.status()).toEqual({ state: 'ok', problems: [] });
    expect(lines(warn)).toEqual([]);
    expect(lines(error)).toEqual([]);
  });

  it('mounts the MCP endpoint with streaming on and no maxConcurrentStreams without a warning (the default cap is finite)', async () => {
    const failure = await boot({
      agentFactory: () => ({ permissions: 'readonly' }),
      mcp: { path: '/mcp', streaming: true },
    });
    expect(failure).toBeUndefined();
    expect(lines(warn)).toEqual([]);
    expect(lines(error)).toEqual([]);
  });

  it('a wrong master key fails the boot naming parse.masterKey, quoting neither key', async () => {
    const failure = await boot({
      parse: { ...testParseConnection(), masterKey: 'not-the-master-key' },
    });
    expect(failure).toBeInstanceOf(ParseAgentConfigError);
    expect((failure as ParseAgentConfigError).errorCode).toBe('invalid_configuration');
    expect(failure!.message).toContain('  - parse.masterKey: Parse Server at ');
    expect(failure!.message).toContain('refused parse.masterKey (HTTP 403');
    expect(failure!.message).not.toContain('not-the-master-key');
    expect(failure!.message).not.toContain(testParseConfig().masterKey);
  });

  it('a wrong application id fails the boot naming parse.appId', async () => {
    const failure = await boot({ parse: { ...testParseConnection(), appId: 'no-such-app' } });
    expect(failure).toBeInstanceOf(ParseAgentConfigError);
    expect(failure!.message).toContain('  - parse.appId: ');
    expect(failure!.message).toContain('"no-such-app"');
    expect(failure!.message).not.toContain('parse.masterKey: ');
  });

  it('a serverURL without the Parse mount path fails the boot naming parse.serverURL', async () => {
    const root = testParseConfig().serverURL.replace(/\/parse$/, '');
    const failure = await boot({ parse: { ...testParseConnection(), serverURL: root } });
    expect(failure).toBeInstanceOf(ParseAgentConfigError);
    expect(failure!.message).toContain(`  - parse.serverURL: ${root} answered HTTP 404`);
  });

  it('a postgres.uri on a closed port fails the boot naming postgres.uri and host:port, never the password', async () => {
    const port = await findFreePort();
    const failure = await boot({
      postgres: { uri: `postgres://postgres:pg-secret-pw@127.0.0.1:${port}/parse` },
    });
    expect(failure).toBeInstanceOf(ParseAgentConfigError);
    expect(failure!.message).toContain(
      `  - postgres.uri: PostgreSQL at 127.0.0.1:${port} (database "parse") refused the connection`,
    );
    expect(failure!.message).toContain('ECONNREFUSED');
    expect(failure!.message).not.toContain('pg-secret-pw');
    // Parse itself is fine: only the wrong setting is named.
    expect(failure!.message).not.toContain('parse.');
  });

  it('a postgres.uri on a database that is not Parse Server’s says so', async () => {
    const failure = await boot({ postgres: { uri: pgWithout('/postgres') } });
    expect(failure!.message).toContain('  - postgres.uri: PostgreSQL at 127.0.0.1:');
    expect(failure!.message).toContain('has no "_SCHEMA" table');
  });

  it('a mongo.uri that cannot be reached fails the boot naming mongo.uri, never the password', async () => {
    const port = await findFreePort();
    const failure = await boot({
      mongo: {
        uri: `mongodb://agent:mongo-secret-pw@127.0.0.1:${port}/parse?serverSelectionTimeoutMS=300`,
      },
    });
    expect(failure).toBeInstanceOf(ParseAgentConfigError);
    expect(failure!.message).toContain(
      `  - mongo.uri: MongoDB at mongodb://127.0.0.1:${port}/parse`,
    );
    expect(failure!.message).not.toContain('mongo-secret-pw');
  });

  it("startupCheck: 'warn' logs the wrong setting and boots", async () => {
    const failure = await boot({
      parse: { ...testParseConnection(), masterKey: 'not-the-master-key' },
      startupCheck: 'warn',
    });
    expect(failure).toBeUndefined();
    expect(lines(warn)).toEqual([expect.stringMatching(/^Start-up check: parse\.masterKey: /)]);
    await expect(app!.get(ParseAgentStartupCheck).ready()).resolves.toBeUndefined();
  });

  it("startupCheck: 'off' boots without asking anything", async () => {
    const failure = await boot({
      parse: { ...testParseConnection(), masterKey: 'not-the-master-key' },
      startupCheck: 'off',
    });
    expect(failure).toBeUndefined();
    expect(lines(warn)).toEqual([]);
  });

  describe('a Parse Server that is not listening at boot', () => {
    let front: Server | undefined;
    afterEach(async () => {
      front?.closeAllConnections();
      await new Promise((r) => (front ? front.close(r) : r(undefined)));
      front = undefined;
    });

    /** A loopback front for the real Parse Server on `port`, started when the test says so. */
    const listenFront = (port: number) => {
      const upstream = new URL(testParseConfig().serverURL);
      front = createServer((req, res) => {
        const out = httpRequest(
          {
            host: upstream.hostname,
            port: upstream.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        out.on('error', () => res.destroy());
        req.pipe(out);
      });
      return new Promise<void>((r) => front!.listen(port, '127.0.0.1', () => r()));
    };

    it('boots, waits quietly, and is ready once it listens (no warning, the boot reports run then)', async () => {
      const port = await findFreePort();
      const failure = await boot({
        parse: { ...testParseConnection(), serverURL: `http://127.0.0.1:${port}/parse` },
        auditMetadataOnBoot: true,
      });
      expect(failure).toBeUndefined();
      const check = app!.get(ParseAgentStartupCheck);
      expect(check.status().state).toBe('checking');
      await new Promise((r) => setTimeout(r, 300));
      await listenFront(port);
      await check.ready();
      expect(check.status()).toEqual({ state: 'ok', problems: [] });
      await check.parseAnswered();
      for (let i = 0; i < 50 && !lines(log).some((l) => l.startsWith('Agent metadata audit')); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(lines(log).some((l) => l.startsWith('Agent metadata audit'))).toBe(true);
      expect(lines(warn)).toEqual([]);
      expect(lines(error)).toEqual([]);
      expect((front!.address() as AddressInfo).port).toBe(port);
    });

    it('says at once (after two seconds, once) that it waits for Parse Server and why, then is ready when it listens', async () => {
      const port = await findFreePort();
      const failure = await boot({
        parse: { ...testParseConnection(), serverURL: `http://127.0.0.1:${port}/parse` },
        startupCheck: { parseWaitMs: 20_000 },
      });
      expect(failure).toBeUndefined();
      const waiting = (l: string) => l.startsWith('Start-up check: waiting for Parse Server');
      for (let i = 0; i < 200 && !lines(log).some(waiting); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(lines(log).filter(waiting)).toEqual([
        `Start-up check: waiting for Parse Server at http://127.0.0.1:${port}/parse (ECONNREFUSED); tool calls fail until it answers. Giving up after 20 s.`,
      ]);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(lines(log).filter(waiting)).toHaveLength(1);
      await listenFront(port);
      await app!.get(ParseAgentStartupCheck).ready();
      expect(lines(warn)).toEqual([]);
      expect(lines(error)).toEqual([]);
    }, 20_000);

    it('refuses readiness naming parse.serverURL once parseWaitMs has passed, and logs one error', async () => {
      const port = await findFreePort();
      const failure = await boot({
        parse: { ...testParseConnection(), serverURL: `http://127.0.0.1:${port}/parse` },
        startupCheck: { parseWaitMs: 400 },
      });
      expect(failure).toBeUndefined();
      const check = app!.get(ParseAgentStartupCheck);
      const refused = await check.ready().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(refused).toBeInstanceOf(ParseAgentConfigError);
      expect(refused!.message).toContain(
        `  - parse.serverURL: Parse Server at http://127.0.0.1:${port}/parse cannot be reached (ECONNREFUSED)`,
      );
      expect(check.status().state).toBe('failed');
      expect(lines(error)).toEqual([
        expect.stringMatching(/^Start-up check: parse\.serverURL: .*still so after 400 ms/),
      ]);
      expect(lines(warn)).toEqual([]);
    });
  });
});
