import { CliUsageError, positiveIntegerSetting, readCliSettings } from './cli-settings';
import { formatTable, rowsOf } from './format-table';

const base = {
  PARSE_SERVER_URL: 'http://localhost:1337/parse',
  PARSE_APP_ID: 'app',
  PARSE_MASTER_KEY: 'mk',
};

describe('readCliSettings', () => {
  it('acts as the operator without a user identity, readonly by default', () => {
    const settings = readCliSettings({}, { ...base });
    expect(settings.identity).toEqual({ kind: 'master' });
    expect(settings.permissions).toBe('readonly');
  });

  it('prefers flags over the environment', () => {
    const settings = readCliSettings(
      { serverUrl: 'https://x.example/parse', sessionToken: 'r:flag', permissions: 'write' },
      { ...base, PARSE_SESSION_TOKEN: 'r:env', MCP_AGENT_PERMISSIONS: 'admin' },
    );
    expect(settings.parse.serverURL).toBe('https://x.example/parse');
    expect(settings.identity).toEqual({ kind: 'session', sessionToken: 'r:flag' });
    expect(settings.permissions).toBe('write');
  });

  it('refuses an identity setting that is set but blank, instead of acting with the master key', () => {
    for (const blank of ['', ' ', '\t', ' \n ']) {
      for (const name of [
        'PARSE_SESSION_TOKEN',
        'PARSE_USERNAME',
        'PARSE_AGENT_TENANT_ID',
        'PARSE_AGENT_TENANT_ROLE',
      ]) {
        expect(() => readCliSettings({}, { ...base, [name]: blank })).toThrow(
          new RegExp(`^${name} is set but empty`),
        );
      }
      expect(() => readCliSettings({ tenant: blank }, { ...base })).toThrow(
        /^--tenant is set but empty/,
      );
      expect(() => readCliSettings({ username: blank }, { ...base })).toThrow(
        /^--username is set but empty/,
      );
    }
    // Unset is still "no identity": the operator with the master key.
    expect(readCliSettings({}, { ...base, PARSE_SESSION_TOKEN: undefined }).identity).toEqual({
      kind: 'master',
    });
  });

  it('names every missing connection setting', () => {
    expect(() => readCliSettings({}, {})).toThrow(
      /PARSE_SERVER_URL \(or --server-url\), PARSE_APP_ID \(or --app-id\), PARSE_MASTER_KEY/,
    );
  });

  it('refuses two identities, a username without password, bad URLs and tiers', () => {
    expect(() =>
      readCliSettings({}, { ...base, PARSE_SESSION_TOKEN: 'r:a', PARSE_USERNAME: 'alice' }),
    ).toThrow(/one identity/);
    expect(() => readCliSettings({ username: 'alice' }, { ...base })).toThrow(/PARSE_PASSWORD/);
    expect(() => readCliSettings({}, { ...base, PARSE_SERVER_URL: 'ftp://x' })).toThrow(
      /http\(s\) URL/,
    );
    expect(() => readCliSettings({ permissions: 'root' }, { ...base })).toThrow(CliUsageError);
  });

  it('reads positive integers or says what is wrong', () => {
    expect(positiveIntegerSetting({ N: '12' }, 'N')).toBe(12);
    expect(positiveIntegerSetting({}, 'N')).toBeUndefined();
    expect(() => positiveIntegerSetting({ N: '0' }, 'N')).toThrow(/N must be a positive integer/);
  });
});

describe('formatTable', () => {
  it('aligns columns in order of first appearance and cuts long cells', () => {
    const table = formatTable([
      { a: 1, b: 'x'.repeat(60) },
      { a: 22, c: { nested: true } },
    ]);
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^a +b +c$/);
    expect(lines[2]).toContain('x'.repeat(39) + '…');
    expect(lines[3]).toContain('{"nested":true}');
  });

  it('says how many columns it left out', () => {
    const row = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`k${i}`, i]));
    expect(formatTable([row])).toMatch(/2 more column\(s\) not shown: k12, k13/);
  });

  it('finds rows in results, rows or a bare array, and nothing else', () => {
    expect(rowsOf({ results: [{ a: 1 }] })).toEqual([{ a: 1 }]);
    expect(rowsOf([{ a: 1 }])).toEqual([{ a: 1 }]);
    expect(rowsOf({ count: 3 })).toBeUndefined();
    expect(rowsOf({ results: [1, 2] })).toBeUndefined();
  });
});

describe('readCliSettings: the direct database path', () => {
  it('reads POSTGRES_URI or MONGODB_URI, a flag winning over the environment', () => {
    expect(readCliSettings({}, { ...base }).database).toBeUndefined();
    expect(readCliSettings({}, { ...base, POSTGRES_URI: 'postgres://u:p@h/db' }).database).toEqual({
      kind: 'postgres',
      uri: 'postgres://u:p@h/db',
    });
    expect(
      readCliSettings(
        { databaseUris: { mongo: 'mongodb+srv://u:p@h/db' } },
        { ...base, MONGODB_URI: 'mongodb://other/db' },
      ).database,
    ).toEqual({ kind: 'mongo', uri: 'mongodb+srv://u:p@h/db' });
  });

  it('refuses both, or a URI of the wrong kind, without echoing the URI', () => {
    const both = () =>
      readCliSettings(
        {},
        { ...base, POSTGRES_URI: 'postgres://u:s3cret@h/db', MONGODB_URI: 'mongodb://h/db' },
      );
    expect(both).toThrow(/Set one database/);
    const wrong = () => readCliSettings({}, { ...base, MONGODB_URI: 'postgres://u:s3cret@h/db' });
    expect(wrong).toThrow(/MONGODB_URI must be a mongodb:\/\//);
    for (const run of [both, wrong]) {
      try {
        run();
      } catch (error) {
        expect((error as Error).message).not.toContain('s3cret');
      }
    }
  });
});
