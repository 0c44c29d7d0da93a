import { Client } from 'pg';
import { AgentAllowCollscan, AgentVisible, ParseClass, type ParseAgent } from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { createObjects, createUser, defineClass } from '../harness/fixtures';
import { findRows, parseRest, testParseConfig } from '../harness/parse-rest';

/**
 * `analytics.refuseCollscan` on the real PostgreSQL path of a real Parse Server: every tool that
 * reads rows with a filter is explained first (EXPLAIN on PostgreSQL, where a sequential scan of a
 * large table is the collection scan) and refused when the filter has no index to use, with an
 * error that says how to fix it; the same tools with a filter on an indexed field run and answer
 * what Parse REST answers. The rows are many enough (over `collscanMinRows`) and ANALYZEd, so the
 * planner's choice is the one a production table would get.
 */
const run = Date.now().toString(36);
const ITEM = `CsItem_${run}`;
const LOOKUP = `CsLookup_${run}`;
const ROWS = 1_500;
const COLORS = ['red', 'green', 'blue', 'black', 'white'];
const sku = (i: number) => `sku-${String(i).padStart(5, '0')}`;

@ParseClass(ITEM)
@AgentVisible()
class Item {}

@ParseClass(LOOKUP)
@AgentVisible()
@AgentAllowCollscan()
class Lookup {}

const INDEXED = { sku: { $in: [sku(7), sku(42), sku(420), sku(1_337)] } };
const UNINDEXED = { color: 'red' };

/** Every tool that reads rows, called with `where` as its filter. */
const CALLS: Array<[tool: string, args: (where: Data) => Data]> = [
  ['query_class', (where) => ({ where, keys: ['sku', 'color'] })],
  ['count_objects', (where) => ({ where })],
  ['distinct', (where) => ({ field: 'color', where })],
  ['group_by', (where) => ({ field: 'color', where })],
  ['group_by', (where) => ({ field: 'color', where, operation: 'sum', value_field: 'qty' })],
  ['group_by_date', (where) => ({ field: 'soldAt', interval: 'month', where })],
  ['aggregate', (where) => ({ pipeline: [{ $match: where }, { $count: 'n' }] })],
  ['export_data', (where) => ({ where, keys: ['sku', 'color'] })],
  ['export_data', (where) => ({ pipeline: [{ $match: where }, { $project: { sku: 1 } }] })],
];

const call = (
  agent: ParseAgent,
  className: string,
  [tool, args]: (typeof CALLS)[number],
  where: Data,
) => agent.execute(tool, { class_name: className, ...args(where) });

describe('refuseCollscan on the PostgreSQL path (every tool that reads rows)', () => {
  let guarded: AgentTestBed;
  let open: AgentTestBed;
  let master: ParseAgent;
  let user: ParseAgent;
  let service: ParseAgent;
  let unguarded: ParseAgent;
  let session: string;
  let expected: Data[];

  beforeAll(async () => {
    const fields = {
      sku: { type: 'String' },
      color: { type: 'String' },
      qty: { type: 'Number' },
      soldAt: { type: 'Date' },
    };
    await defineClass(ITEM, fields);
    await defineClass(LOOKUP, fields);
    const rows = Array.from({ length: ROWS }, (_, i) => ({
      sku: sku(i),
      color: COLORS[i % COLORS.length],
      qty: (i % 7) + 1,
      soldAt: { __type: 'Date', iso: new Date(Date.UTC(2025, i % 12, 1 + (i % 27))).toISOString() },
      ACL: { '*': { read: true } },
    }));
    await createObjects(ITEM, rows);
    await createObjects(LOOKUP, rows);
    // The index a Parse operator adds through the schema API; then the statistics autovacuum
    // would gather, so the planner sees the table as it is.
    await parseRest(
      'PUT',
      `/schemas/${ITEM}`,
      { className: ITEM, indexes: { cs_sku: { sku: 1 } } },
      { masterKey: true },
    );
    const pg = new Client({ connectionString: testParseConfig().databaseURI });
    await pg.connect();
    try {
      await pg.query(`ANALYZE "${ITEM}"`);
      await pg.query(`ANALYZE "${LOOKUP}"`);
    } finally {
      await pg.end();
    }
    session = (await createUser(`cs_${run}`)).sessionToken;
    expected = await findRows(ITEM, INDEXED, { sessionToken: session }, { limit: '100' });
    const postgres = { uri: testParseConfig().databaseURI };
    guarded = await createAgentTestBed([Item, Lookup], {
      postgres,
      analytics: { refuseCollscan: true },
    });
    open = await createAgentTestBed([Item, Lookup], { postgres });
    master = guarded.factory.create();
    user = guarded.factory.create({ sessionToken: session });
    service = guarded.factory.create({ aclUser: (await userId(session)) as string });
    unguarded = open.factory.create({ sessionToken: session });
  }, 180_000);

  afterAll(async () => {
    await guarded?.close();
    await open?.close();
  });

  const agents = () =>
    [
      ['master key', master],
      ['session token', user],
      ['aclUser', service],
    ] as const;

  it.each(CALLS.map((c) => [c[0], c] as const))(
    '%s: a filter on an unindexed field is refused with the fix, for every identity',
    async (_tool, spec) => {
      for (const [who, agent] of agents()) {
        const res = refused(await call(agent, ITEM, spec, UNINDEXED));
        expect({ who, code: res.error_code }).toEqual({ who, code: 'security_blocked' });
        expect(res.error).toContain(`COLLSCAN on ${ITEM}`);
        expect(res.error).toMatch(/filter on an indexed field/);
        expect(res.error).toMatch(/add an index/);
        expect(res.details).toMatchObject({ refused: true, reason: `COLLSCAN on ${ITEM}` });
        // The plan (index topology) is not shown without exposeExplain.
        expect(res.details).not.toHaveProperty('winning_plan');
      }
    },
  );

  it.each(CALLS.map((c) => [c[0], c] as const))(
    '%s: a filter on an indexed field runs, for every identity',
    async (_tool, spec) => {
      for (const [, agent] of agents()) ok(await call(agent, ITEM, spec, INDEXED));
    },
  );

  it('answers the indexed reads as Parse REST does for the same user', async () => {
    const skus = expected.map((r) => r.sku).sort();
    expect(skus).toHaveLength(4);
    const rows = ok(await call(user, ITEM, CALLS[0], INDEXED));
    expect(rows.results.map((r: Data) => r.sku).sort()).toEqual(skus);
    expect(ok(await call(user, ITEM, CALLS[1], INDEXED)).count).toBe(4);
    const colors = [...new Set(expected.map((r) => r.color as string))].sort();
    expect(ok(await call(user, ITEM, CALLS[2], INDEXED)).values.sort()).toEqual(colors);
    const groups = ok(await call(user, ITEM, CALLS[3], INDEXED)).groups as Data[];
    const counted: Record<string, number> = {};
    for (const r of expected) counted[r.color as string] = (counted[r.color as string] ?? 0) + 1;
    expect(Object.fromEntries(groups.map((g) => [g.key, g.value]))).toEqual(counted);
    expect(ok(await call(user, ITEM, CALLS[6], INDEXED)).results).toEqual([{ n: 4 }]);
  });

  it('the same unindexed filters run without refuseCollscan, and answer what Parse REST does', async () => {
    const red = await parseRest<{ count: number }>(
      'GET',
      `/classes/${ITEM}?count=1&limit=0&where=${encodeURIComponent(JSON.stringify(UNINDEXED))}`,
      undefined,
      { sessionToken: session },
    );
    expect(red.count).toBe(ROWS / COLORS.length);
    for (const spec of CALLS) ok(await call(unguarded, ITEM, spec, UNINDEXED));
    expect(ok(await call(unguarded, ITEM, CALLS[1], UNINDEXED)).count).toBe(red.count);
  });

  it('lets a class marked @AgentAllowCollscan scan', async () => {
    for (const spec of CALLS) ok(await call(master, LOOKUP, spec, UNINDEXED));
  });

  it('does not pre-flight reads by objectId, samples or calls without a filter', async () => {
    const [row] = await findRows(ITEM, { sku: sku(3) }, { masterKey: true });
    ok(await master.execute('get_object', { class_name: ITEM, object_id: row.objectId as string }));
    const many = ok(
      await master.execute('get_objects', { class_name: ITEM, ids: [row.objectId as string] }),
    );
    expect(many.found).toBe(1);
    ok(await master.execute('get_sample_objects', { class_name: ITEM, limit: 2 }));
    expect(ok(await master.execute('count_objects', { class_name: ITEM })).count).toBe(ROWS);
    ok(await master.execute('group_by', { class_name: ITEM, field: 'color' }));
  });

  it('an index walk with no index condition is a full scan too (the planner may pick it for ORDER BY objectId LIMIT)', async () => {
    // Connections that disfavour sequential scans make the planner walk the primary key in
    // objectId order and filter every row, the plan it may also pick on its own from statistics.
    const uri = new URL(testParseConfig().databaseURI);
    uri.searchParams.set('options', '-c enable_seqscan=off');
    const walked = await createAgentTestBed([Item, Lookup], {
      postgres: { uri: uri.toString() },
      analytics: { refuseCollscan: true, exposeExplain: true },
    });
    try {
      const agent = walked.factory.create({ sessionToken: session });
      const res = refused(await call(agent, ITEM, CALLS[0], UNINDEXED));
      expect(res.error).toContain(`COLLSCAN on ${ITEM}`);
      // The refusal shows the plan here (exposeExplain): the walk, not a sequential scan.
      expect(res.details?.winning_plan).toMatchObject({
        sequential_scan: false,
        full_index_scan: true,
      });
      refused(await call(agent, ITEM, CALLS[1], UNINDEXED));
      const rows = ok(await call(agent, ITEM, CALLS[0], INDEXED));
      expect(rows.results.map((r: Data) => r.sku).sort()).toEqual(
        expected.map((r) => r.sku).sort(),
      );
    } finally {
      await walked.close();
    }
  });

  it('explain_query says the same as the pre-flight', async () => {
    const scan = refused(
      await master.execute('explain_query', { class_name: ITEM, where: UNINDEXED }),
    );
    expect(scan.error_code).toBe('security_blocked');
    const indexed = ok(await master.execute('explain_query', { class_name: ITEM, where: INDEXED }));
    expect(indexed.collection_scan).toBe(false);
  });

  it('every tool that reads rows is either pre-flighted here or listed as exempt', () => {
    const preflighted = new Set(CALLS.map((c) => c[0]));
    const exempt = new Set(['get_object', 'get_objects', 'get_sample_objects', 'explain_query']);
    const readers = guarded.tools
      .list()
      .filter(
        (t) => t.category === 'query' || t.category === 'aggregate' || t.category === 'export',
      )
      .map((t) => t.name);
    for (const name of readers) {
      expect({ name, covered: preflighted.has(name) || exempt.has(name) }).toEqual({
        name,
        covered: true,
      });
    }
  });
});

async function userId(sessionToken: string): Promise<string> {
  const me = await parseRest<{ objectId: string }>('GET', '/users/me', undefined, { sessionToken });
  return me.objectId;
}
