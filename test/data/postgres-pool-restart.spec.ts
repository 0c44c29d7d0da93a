import { Client } from 'pg';
import { PostgresDataAccess } from '../../libs/parse-agent/src/data/postgres/postgres-data-access';
import { testParseConfig } from '../harness/parse-rest';

/**
 * The library's own pool outlives a server that closes its idle connections (a PostgreSQL restart,
 * a failover, `pg_terminate_backend`): before, the pool's unhandled `error` event ended the host
 * process. Real PostgreSQL: the backend is really terminated.
 */
describe('the direct path pool when PostgreSQL closes its idle connections', () => {
  const app = `pool-restart-${Date.now().toString(36)}`;
  const uri = (name = app) => {
    const url = new URL(testParseConfig().databaseURI);
    url.searchParams.set('application_name', name);
    return url.toString();
  };
  let admin: Client;
  let access: PostgresDataAccess | undefined;

  beforeAll(async () => {
    admin = new Client({ connectionString: testParseConfig().databaseURI });
    await admin.connect();
  });
  afterAll(async () => {
    await access?.close();
    access = undefined;
    await admin.end();
  });

  const backends = async (name = app) =>
    (
      await admin.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
        [name],
      )
    ).rows.map((r) => r.pid);

  it('reports the closed connection, keeps the process up and serves the next query', async () => {
    const warnings: string[] = [];
    access = new PostgresDataAccess({ uri: uri() }, undefined, (m) => warnings.push(m));
    expect((await access.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    const before = await backends();
    expect(before).toHaveLength(1);

    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
      [app],
    );
    for (let i = 0; i < 100 && warnings.length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(warnings).toEqual([
      expect.stringMatching(
        /PostgreSQL closed an idle connection of the direct path's pool \(terminating connection/,
      ),
    ]);

    // A fresh connection, not the dead one.
    expect((await access.pool.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    const after = await backends();
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before[0]);
  });

  it('close() leaves no connection of the pool on the server and reports nothing', async () => {
    const warnings: string[] = [];
    const closing = new PostgresDataAccess(
      { uri: uri(`${app}-close`), maxConnections: 4 },
      undefined,
      (m) => warnings.push(m),
    );
    // Four connections at once, all idle in the pool afterwards.
    await Promise.all([1, 2, 3, 4].map(() => closing.pool.query('SELECT pg_sleep(0.05)')));
    expect((await backends(`${app}-close`)).length).toBeGreaterThanOrEqual(2);
    await closing.close();
    expect(await backends(`${app}-close`)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("an application's own pool is left to the application: no listener is added to it", async () => {
    const listeners: string[] = [];
    const pool = {
      connect: () => Promise.reject(new Error('unused')),
      query: () => Promise.reject(new Error('unused')),
      end: () => Promise.resolve(),
      on: (event: string) => listeners.push(event),
    };
    const own = new PostgresDataAccess({ pool }, undefined, () => undefined);
    await own.close();
    expect(listeners).toEqual([]);
  });
});
