import { ParseAgentConfigError } from '../core/errors';
import {
  DEFAULT_STARTUP_CHECK,
  probeMongo,
  probePostgres,
  redactedEndpoint,
  resolveStartupCheck,
  startupCheckError,
} from './startup-check';

describe('resolveStartupCheck', () => {
  it("defaults to 'fail' with a 5 s probe limit and a 30 s wait for Parse Server", () => {
    expect(resolveStartupCheck(undefined)).toEqual({
      mode: 'fail',
      timeoutMs: 5_000,
      parseWaitMs: 30_000,
    });
    expect(resolveStartupCheck('warn')).toEqual({ ...DEFAULT_STARTUP_CHECK, mode: 'warn' });
    expect(resolveStartupCheck({ mode: 'off', parseWaitMs: 10 })).toEqual({
      mode: 'off',
      timeoutMs: 5_000,
      parseWaitMs: 10,
    });
  });

  it('refuses a wrong value, naming startupCheck', () => {
    for (const bad of ['strict', { mode: 'loud' }, { timeoutMs: 0 }, { parseWaitMs: -1 }, 3]) {
      expect(() => resolveStartupCheck(bad as never)).toThrow(ParseAgentConfigError);
      expect(() => resolveStartupCheck(bad as never)).toThrow(/startupCheck/);
    }
  });
});

describe('redactedEndpoint', () => {
  it('keeps scheme, host, port and path, never credentials or the query', () => {
    expect(redactedEndpoint('https://user:s3cret@parse.example.com:8443/parse/?x=1')).toBe(
      'https://parse.example.com:8443/parse',
    );
    expect(redactedEndpoint('mongodb://agent:pw@127.0.0.1:27017/db?authSource=admin')).toBe(
      'mongodb://127.0.0.1:27017/db',
    );
    expect(redactedEndpoint('not a url')).toBe('(an unparsable URL)');
  });
});

describe('probes that get no answer', () => {
  const never = () => new Promise<never>(() => undefined);

  it('a PostgreSQL that never answers is reported at the time limit, naming postgres.uri and host:port', async () => {
    const outcome = await probePostgres(
      { query: never },
      'postgres://u:pw-secret@db.internal:6543/parse',
      30,
    );
    expect(outcome).toEqual({
      ok: false,
      setting: 'postgres.uri',
      transient: false,
      message: 'PostgreSQL at db.internal:6543 (database "parse") did not answer within 30 ms.',
    });
  });

  it('a driver message quoting the password is scrubbed', async () => {
    const outcome = await probePostgres(
      { query: () => Promise.reject(new Error('bad login for u:pw-secret')) },
      'postgres://u:pw-secret@db.internal/parse',
      1_000,
    );
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).not.toContain('pw-secret');
    expect(JSON.stringify(outcome)).toContain('db.internal:5432');
  });

  it('an application pool is named as postgres.pool, a client as mongo.client', async () => {
    const pg = await probePostgres({ query: never }, undefined, 10);
    expect(pg).toMatchObject({ ok: false, setting: 'postgres.pool' });
    const mongo = await probeMongo(never, undefined, 10);
    expect(mongo).toMatchObject({ ok: false, setting: 'mongo.client' });
  });
});

describe('startupCheckError', () => {
  it('is a ParseAgentConfigError listing each setting on its own line, with the way out', () => {
    const error = startupCheckError([
      { setting: 'parse.masterKey', message: 'refused.' },
      { setting: 'postgres.uri', message: 'closed.' },
    ]);
    expect(error).toBeInstanceOf(ParseAgentConfigError);
    expect(error.errorCode).toBe('invalid_configuration');
    expect(error.message).toBe(
      "ParseAgentModule start-up check failed:\n  - parse.masterKey: refused.\n  - postgres.uri: closed.\nFix the setting, or set startupCheck: 'warn' to log this and start anyway.",
    );
  });
});
