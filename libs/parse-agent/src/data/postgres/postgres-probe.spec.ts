import { probePostgres } from './postgres-probe';

describe('probePostgres', () => {
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

  it('an application pool is named as postgres.pool', async () => {
    const pg = await probePostgres({ query: never }, undefined, 10);
    expect(pg).toMatchObject({ ok: false, setting: 'postgres.pool' });
  });
});
