import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ParseAgentFactory, type DataPathProvider } from 'nestjs-parse-agent';
import { checkParseServer } from 'nestjs-parse-agent/ops';
import {
  createAgentServices,
  type StandaloneAgentServices,
} from 'nestjs-parse-agent/composition/create-agent-services';
import { parseRest, testParseConnection } from '../harness/parse-rest';
import { closedLocalPort } from '../harness/closed-port';

/**
 * The public replacements for the internals the root entry point no longer exports:
 * `checkParseServer` (was: a ParseRestClient built by hand for a health check) and
 * `ParseAgentFactory.invalidateCaches()` (was: injecting PostgresDataAccess or
 * MongoDataPathProvider to call their `invalidate()`). Real Parse Server on real PostgreSQL.
 */
describe('checkParseServer (real Parse Server)', () => {
  it('is ok with the right master key', async () => {
    expect(await checkParseServer(testParseConnection())).toEqual({ ok: true });
  });

  it('names a refused master key without repeating it', async () => {
    const cfg = testParseConnection();
    const check = await checkParseServer({ ...cfg, masterKey: 'not-the-master-key' });
    expect(check).toMatchObject({ ok: false, problem: 'master_key_refused' });
    expect(JSON.stringify(check)).not.toContain('not-the-master-key');
    expect(JSON.stringify(check)).toContain(cfg.serverURL);
  });

  it('says unreachable when nothing listens', async () => {
    const closedPort = await closedLocalPort();
    const check = await checkParseServer({
      ...testParseConnection(),
      serverURL: `http://127.0.0.1:${closedPort}/parse`,
    });
    expect(check).toEqual({
      ok: false,
      problem: 'unreachable',
      // The cause, as the socket reported it.
      message: `Parse Server at http://127.0.0.1:${closedPort}/parse is unreachable (ECONNREFUSED)`,
    });
  });

  describe('a server that never answers', () => {
    let stalled: Server;
    beforeAll(async () => {
      stalled = createServer(() => undefined);
      await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      stalled.closeAllConnections();
      await new Promise((resolve) => stalled.close(resolve));
    });

    it('times out within the limit given', async () => {
      const { port } = stalled.address() as AddressInfo;
      const started = Date.now();
      const check = await checkParseServer(
        { serverURL: `http://127.0.0.1:${port}/parse`, appId: 'app', masterKey: 'mk' },
        { timeoutMs: 300 },
      );
      expect(check).toMatchObject({ ok: false, problem: 'timeout' });
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  });
});

describe('ParseAgentFactory.invalidateCaches (real Parse Server)', () => {
  const className = `CacheProbe${Date.now().toString(36)}`;
  let built: StandaloneAgentServices;
  const invalidated: string[] = [];
  /** A direct path of the application's own: it caches something and must be told to drop it. */
  const ownPath: DataPathProvider = {
    kind: 'own-cache',
    refusal: () => 'serves nothing here',
    bind: () => {
      throw new Error('not bound in this test');
    },
    invalidate: () => invalidated.push('own-cache'),
  };

  beforeAll(async () => {
    await parseRest(
      'POST',
      `/schemas/${className}`,
      { className, fields: {} },
      { masterKey: true },
    );
    built = createAgentServices({ parse: testParseConnection(), dataPaths: [ownPath] });
  });
  afterAll(async () => {
    await built.close();
    await parseRest('DELETE', `/schemas/${className}`, undefined, { masterKey: true }).catch(
      () => undefined,
    );
  });

  it('makes the next schema read see a field added at run time, and tells every path', async () => {
    const factory = new ParseAgentFactory(built.services, {
      parse: testParseConnection(),
    } as ConstructorParameters<typeof ParseAgentFactory>[1]);
    expect((await built.services.schemas.get(className))?.fields.probe).toBeUndefined();
    await parseRest(
      'PUT',
      `/schemas/${className}`,
      { className, fields: { probe: { type: 'String' } } },
      { masterKey: true },
    );
    // Cached: the added field is not seen yet, and no path was told anything.
    expect((await built.services.schemas.get(className))?.fields.probe).toBeUndefined();
    expect(invalidated).toEqual([]);

    factory.invalidateCaches();

    expect((await built.services.schemas.get(className))?.fields.probe).toEqual({ type: 'String' });
    expect(invalidated).toEqual(['own-cache']);
  });
});
