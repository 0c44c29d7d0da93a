import { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import type { DataPathDescriptor } from '../data/data-path-descriptor';
import { BUILTIN_DATA_PATHS, databaseOptions, openDataPaths } from './data-paths';

const parse = () =>
  new ParseRestClient({ serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: 'mk' });

/**
 * A pool or client the application owns: every method it is asked for records the call and
 * throws (no database is reachable from a unit spec). Nothing may close it but the application.
 */
function appOwnedHandle() {
  const calls: string[] = [];
  const handle: object = new Proxy(
    {},
    {
      get: (_, name) => {
        // Not a promise, and no Symbol-keyed protocol.
        if (typeof name !== 'string' || name === 'then') return undefined;
        return () => {
          calls.push(name);
          throw new Error(`app handle: ${name} is not reachable here`);
        };
      },
    },
  );
  return { handle, calls };
}

describe('the built-in data paths: every descriptor holds to the contract', () => {
  const paths = BUILTIN_DATA_PATHS as readonly DataPathDescriptor[];

  it('kinds, variables and flags are each unique, and every flag is a long option', () => {
    for (const values of [
      paths.map((p) => p.kind),
      paths.map((p) => p.uri.env),
      paths.map((p) => p.uri.flag),
    ]) {
      expect(new Set(values).size).toBe(values.length);
    }
    for (const path of paths) {
      expect(path.uri.flag).toMatch(/^--[a-z][a-z0-9-]*$/);
      expect(path.uri.env).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(path.uri.schemes.length).toBeGreaterThan(0);
      for (const scheme of path.uri.schemes) expect(scheme).toMatch(/^[a-z][a-z0-9+.-]*:$/);
    }
  });

  describe.each(paths.map((path) => [path.kind, path] as const))('%s', (kind, path) => {
    it('takes a connection string of each of its schemes, and refuses another scheme naming kind.uri', () => {
      for (const scheme of path.uri.schemes) {
        const option = path.fromUri(`${scheme}//user:pw@db.internal/parse`);
        expect(path.validate(option)).toEqual([]);
      }
      const foreign = path.validate(path.fromUri('ftp://user:pw@db.internal/parse'));
      expect(foreign.length).toBeGreaterThan(0);
      for (const problem of foreign) expect(problem.startsWith(`${kind}.uri `)).toBe(true);
      // The message says what to use, and never echoes the password.
      expect(foreign.join(' ')).toContain(`${path.uri.schemes[0]}//`);
      expect(foreign.join(' ')).not.toContain('pw@');
    });

    it('refuses what is no option, each problem starting with the option’s name', () => {
      for (const bad of [null, 'a string', 42, [], {}, { uri: '' }]) {
        const problems = path.validate(bad);
        expect(problems.length).toBeGreaterThan(0);
        for (const problem of problems) expect(problem).toMatch(new RegExp(`^${kind}[ .]`));
      }
    });

    it('opens a provider of its own kind without connecting, and closes what it made from a uri', async () => {
      const opened = path.open(path.fromUri(`${path.uri.schemes[0]}//u:pw@127.0.0.1:9/parse`), {
        parse: parse(),
      });
      expect(opened.kind).toBe(kind);
      expect(opened.provider.kind).toBe(kind);
      expect(typeof opened.provider.bind).toBe('function');
      await expect(opened.close()).resolves.toBeUndefined();
    });

    it('leaves an application’s own pool or client open, and its probe names the setting', async () => {
      const { handle, calls } = appOwnedHandle();
      const option = { [path.handleKey]: handle };
      expect(path.validate(option)).toEqual([]);
      const opened = path.open(option, { parse: parse() });
      const outcome = await opened.probe(1_000);
      expect(outcome).toMatchObject({ ok: false, transient: false });
      expect(outcome.ok || outcome.setting.startsWith(`${kind}.`)).toBe(true);
      await opened.close();
      // The probe may read through the handle; nothing may end or close it.
      expect(calls.filter((name) => /^(end|close|disconnect|destroy)$/.test(name))).toEqual([]);
    });

    it('is what `database: { kind, uri }` builds, with the database Parse Server runs on', () => {
      const uri = `${path.uri.schemes[0]}//h/db`;
      expect(databaseOptions({ kind: path.kind as never, uri }, 'spec')).toEqual({
        paths: { [kind]: path.fromUri(uri) },
        parseDatabase: path.parseDatabase,
      });
    });
  });

  it('opens the configured paths in the list’s order, and none that is not configured', async () => {
    expect(openDataPaths({}, { parse: parse() })).toEqual([]);
    const options = Object.fromEntries(
      paths.map((path) => [path.kind, path.fromUri(`${path.uri.schemes[0]}//127.0.0.1:9/db`)]),
    );
    const opened = openDataPaths(options, { parse: parse() });
    expect(opened.map((p) => p.kind)).toEqual(paths.map((p) => p.kind));
    await Promise.all(opened.map((p) => p.close()));
  });

  it('refuses a database kind that is no built-in path, naming database and the kinds', () => {
    expect(() => databaseOptions({ kind: 'mysql' as never, uri: 'mysql://h/db' }, 'spec')).toThrow(
      /^spec: database must be \{ kind, uri \} with kind 'postgres' or 'mongo'/,
    );
    expect(() => databaseOptions({ kind: 'postgres', uri: '' }, 'spec')).toThrow(/spec: database/);
    expect(databaseOptions(undefined, 'spec')).toEqual({ paths: {} });
  });
});
