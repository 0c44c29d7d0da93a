import {
  AgentCanonicalFilter,
  AgentFields,
  AgentTenantScope,
  AgentVisible,
  ParseClass,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { writeFileSync } from 'node:fs';
import { Aggregator } from 'mingo';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import type { Data } from '../harness/envelopes';
import {
  createObjects,
  createRole,
  createUser,
  defineClass,
  pointer,
  type Acl,
  type SeededUser,
} from '../harness/fixtures';
import { findRows, testParseConfig, type RestAuth } from '../harness/parse-rest';
import {
  CHANNELS,
  FAMILIES,
  PipelineGenerator,
  STATUSES,
  TAGS,
  TIERS,
  type Family,
  type Stage,
} from '../differential/pipeline-generator';
import {
  asDocument,
  byJson,
  canonical,
  cloneDoc,
  docsPipelines,
  forMingo,
  localParts,
  pad,
  zonedMidnight,
} from '../differential/pipeline-oracle-helpers';
import { SeededRandom } from '../differential/seeded-random';

/**
 * The oracle for the direct PostgreSQL path's pipelines: random valid pipelines over the demo's
 * order schema run through the `aggregate` tool (validator, scopes, SQL) as four identities, and
 * each answer must equal mingo's (an independent implementation of MongoDB's pipeline semantics)
 * over exactly the rows Parse REST returns to that identity. Real Parse Server, real PostgreSQL.
 *
 * ORACLE_SEED and ORACLE_ITERATIONS replay or widen the run (CI: a fixed seed).
 */
const run = Date.now().toString(36);
const ORDER = `OrcOrder_${run}`;
const CUSTOMER = `OrcCustomer_${run}`;
const SEED = Number(process.env.ORACLE_SEED ?? 3707);
const ITERATIONS = Number(process.env.ORACLE_ITERATIONS ?? 400);
const SECRET = 'SECRET-';
const EMAIL = '@hidden.example';
const GLOBEX_ONLY = 'GlobexOnly';

@ParseClass(ORDER)
@AgentVisible()
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId')
class OracleOrder {}

@ParseClass(CUSTOMER)
@AgentVisible()
@AgentFields('tenantId', 'name', 'city', 'tier', 'lifetimeValue')
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId')
class OracleCustomer {}

type Row = Record<string, unknown>;

interface Who {
  name: string;
  tenant: string;
  agent: ParseAgent;
  rest: RestAuth;
  /** Rows Parse REST returns to this identity, in the shape the pipeline sees them. */
  orders: Row[];
  customers: Row[];
}

// ---- data ------------------------------------------------------------------------------------

describe('aggregate on PostgreSQL against mingo over the rows each identity may read', () => {
  let bed: AgentTestBed;
  let whos: Who[] = [];
  let alice: SeededUser;
  let bob: SeededUser;
  let staffer: SeededUser;
  const staffRole = `orc_staff_${run}`;

  beforeAll(async () => {
    alice = await createUser(`orc_alice_${run}`);
    bob = await createUser(`orc_bob_${run}`);
    staffer = await createUser(`orc_staffer_${run}`);
    await createRole(staffRole, { users: [staffer.objectId] });
    const publicClp = {
      find: { '*': true },
      get: { '*': true },
      count: { '*': true },
      create: {},
      update: {},
      delete: {},
      addField: {},
    };
    await defineClass(
      CUSTOMER,
      {
        tenantId: { type: 'String' },
        name: { type: 'String' },
        email: { type: 'String' },
        city: { type: 'String' },
        tier: { type: 'String' },
        lifetimeValue: { type: 'Number' },
        isDeleted: { type: 'Boolean' },
      },
      { ...publicClp, protectedFields: { '*': ['email'] } },
    );
    await defineClass(
      ORDER,
      {
        tenantId: { type: 'String' },
        orderNumber: { type: 'String' },
        customer: { type: 'Pointer', targetClass: CUSTOMER },
        quantity: { type: 'Number' },
        unitPrice: { type: 'Number' },
        total: { type: 'Number' },
        status: { type: 'String' },
        channel: { type: 'String' },
        placedAt: { type: 'Date' },
        tags: { type: 'Array' },
        meta: { type: 'Object' },
        secret: { type: 'String' },
        isDeleted: { type: 'Boolean' },
      },
      { ...publicClp, protectedFields: { '*': ['secret'] } },
    );
    const r = new SeededRandom(SEED);
    const acls: Array<Acl | undefined> = [
      undefined,
      { '*': { read: true } },
      { [alice.objectId]: { read: true } },
      { [bob.objectId]: { read: true } },
      { [`role:${staffRole}`]: { read: true } },
      { [alice.objectId]: { read: true }, [bob.objectId]: { read: true } },
      {},
    ];
    const customerRows: Row[] = [];
    for (let i = 0; i < 10; i++) {
      const tenant = i < 6 ? 'acme' : 'globex';
      const row: Row = {
        tenantId: tenant,
        name: tenant === 'globex' ? `${GLOBEX_ONLY}${i}` : `Cust${i}`,
        email: `c${i}${EMAIL}`,
        city: r.pick(['Lisbon', 'Austin', 'Pune']),
        tier: TIERS[i % 3],
        lifetimeValue: r.int(0, 5000),
        isDeleted: i === 4,
      };
      const acl = i % 5 === 3 ? acls[2] : i % 5 === 1 ? acls[4] : undefined;
      customerRows.push(acl ? { ...row, ACL: acl } : row);
    }
    const customers = await createObjects(CUSTOMER, customerRows);
    const orders: Row[] = [];
    for (let i = 0; i < 84; i++) {
      const tenant = i % 4 === 3 ? 'globex' : 'acme';
      const quantity = r.int(1, 9);
      const unitPrice = r.pick([5, 12.5, 20, 99.99, 3]);
      // Some acme orders point at globex customers: the join must never reach them.
      const customer =
        customers[i % 7 === 0 ? r.int(6, 9) : tenant === 'acme' ? r.int(0, 5) : r.int(6, 9)];
      const hour = r.pick([0, 1, 2, 4, 12, 21, 22, 23]);
      const placedAt = new Date(
        Date.UTC(2024, r.int(0, 11), r.int(1, 28), hour, r.int(0, 59), r.int(0, 59), r.int(0, 999)),
      );
      const row: Row = {
        tenantId: tenant,
        orderNumber: `O-${String(i).padStart(5, '0')}`,
        customer: pointer(CUSTOMER, customer),
        quantity,
        unitPrice,
        channel: r.pick(CHANNELS),
        placedAt: { __type: 'Date', iso: placedAt.toISOString() },
        secret: `${SECRET}${i}`,
        isDeleted: i % 17 === 5,
      };
      if (i % 9 !== 4) row.status = r.pick(STATUSES);
      if (i % 7 !== 2) row.total = quantity * unitPrice;
      if (i % 5 !== 1) row.tags = r.some(TAGS, 3);
      if (i % 6 !== 0) row.meta = { source: r.pick(CHANNELS), score: r.int(0, 9) };
      const acl = acls[i % acls.length];
      orders.push(acl ? { ...row, ACL: acl } : row);
    }
    await createObjects(ORDER, orders);

    bed = await createAgentTestBed([OracleOrder, OracleCustomer], {
      postgres: { uri: testParseConfig().databaseURI },
    });
    const identities: Array<Omit<Who, 'orders' | 'customers'>> = [
      {
        name: 'master (tenant acme)',
        tenant: 'acme',
        agent: bed.factory.create({ tenantId: 'acme' }),
        rest: { masterKey: true },
      },
      {
        name: 'alice session (tenant acme)',
        tenant: 'acme',
        agent: bed.factory.create({ sessionToken: alice.sessionToken, tenantId: 'acme' }),
        rest: { sessionToken: alice.sessionToken },
      },
      {
        name: 'aclUser bob (tenant globex)',
        tenant: 'globex',
        agent: bed.factory.create({ aclUser: bob.objectId, tenantId: 'globex' }),
        rest: { sessionToken: bob.sessionToken },
      },
      {
        name: 'aclRole staff (tenant acme)',
        tenant: 'acme',
        agent: bed.factory.create({ aclRole: staffRole, tenantId: 'acme' }),
        rest: { sessionToken: staffer.sessionToken },
      },
    ];
    const scope = (tenant: string) => ({ tenantId: tenant, isDeleted: { $ne: true } });
    const allowed = [
      'objectId',
      'createdAt',
      'updatedAt',
      'tenantId',
      'name',
      'city',
      'tier',
      'lifetimeValue',
    ];
    for (const who of identities) {
      const orderRows = await findRows(ORDER, scope(who.tenant), who.rest, { limit: '1000' });
      const customerRows = await findRows(CUSTOMER, scope(who.tenant), who.rest, { limit: '1000' });
      whos.push({
        ...who,
        orders: orderRows.map((row) => asDocument(row)),
        customers: customerRows.map((row) => asDocument(row, allowed)),
      });
    }
    whos = whos.filter((w) => w.orders.length > 0);
  }, 180_000);

  afterAll(() => bed?.close());

  async function ours(who: Who, pipeline: Stage[]): Promise<Data> {
    const envelope = await who.agent.execute('aggregate', {
      class_name: ORDER,
      pipeline,
      compact_pointers: false,
    });
    if (!envelope.success) {
      throw new Error(`${envelope.error_code}: ${envelope.error}`);
    }
    return envelope.data as Data;
  }

  function theirs(who: Who, pipeline: Stage[]): Row[] {
    const resolver = (name: string) => (name === CUSTOMER ? who.customers : []);
    return new Aggregator(forMingo(pipeline) as Stage[], { collectionResolver: resolver }).run(
      who.orders.map(cloneDoc) as Row[],
    ) as Row[];
  }

  /** Runs `count` generated pipelines as every identity; returns the differences found. */
  async function check(
    families: readonly Family[],
    seed: number,
    count: number,
  ): Promise<string[]> {
    const r = new SeededRandom(seed);
    const gen = new PipelineGenerator(r, families, CUSTOMER);
    const problems: string[] = [];
    for (let i = 0; i < count; i++) {
      const { pipeline, model } = gen.pipeline(5);
      await Promise.all(
        whos.map(async (who) => {
          let got: Data;
          try {
            got = await ours(who, pipeline);
          } catch (e) {
            problems.push(
              `#${i} ${who.name}: refused ${(e as Error).message}\n  ${JSON.stringify(pipeline)}`,
            );
            return;
          }
          let want: Row[];
          try {
            want = theirs(who, pipeline);
          } catch (e) {
            problems.push(
              `#${i} ${who.name}: mingo failed ${(e as Error).message}\n  ${JSON.stringify(pipeline)}`,
            );
            return;
          }
          const a = (got.results as Row[]).map((row) => canonical(row));
          const b = want.map((row) => canonical(row));
          if (!model.ordered) {
            a.sort(byJson);
            b.sort(byJson);
          }
          if (got._truncated || got.auto_limited) {
            problems.push(
              `#${i} ${who.name}: answer cut (${got.result_count} rows); shrink the data\n  ${JSON.stringify(pipeline)}`,
            );
          } else if (JSON.stringify(a) !== JSON.stringify(b)) {
            const at = a.findIndex((row, k) => JSON.stringify(row) !== JSON.stringify(b[k]));
            const bs = new Set(b.map((x) => JSON.stringify(x)));
            const as = new Set(a.map((x) => JSON.stringify(x)));
            const onlySql = a.map((x) => JSON.stringify(x)).find((x) => !bs.has(x));
            const onlyMingo = b.map((x) => JSON.stringify(x)).find((x) => !as.has(x));
            const dump = process.env.ORACLE_DUMP
              ? `\n  all sql   ${JSON.stringify(a)}\n  all mingo ${JSON.stringify(b)}`
              : '';
            problems.push(
              `#${i} ${who.name}: differs (${a.length} vs ${b.length} rows, first at ${at})\n  pipeline ${JSON.stringify(pipeline)}\n  sql   ${onlySql ?? JSON.stringify(a[at])}\n  mingo ${onlyMingo ?? JSON.stringify(b[at])}${dump}`,
            );
          }
          assertNothingLeaks(who, got);
        }),
      );
    }
    if (problems.length)
      writeFileSync(`/tmp/pg-stages-oracle-${families.join('-')}.txt`, problems.join('\n'));
    return problems;
  }

  /** What must never come back: a protected value, a hidden field, another tenant's customer. */
  function assertNothingLeaks(who: Who, got: Data): void {
    const text = JSON.stringify(got.results);
    expect(text).not.toContain(EMAIL);
    if (!who.rest.masterKey) expect(text).not.toContain(SECRET);
    if (who.tenant === 'acme') expect(text).not.toContain(GLOBEX_ONLY);
  }

  it('the identities see different rows (the comparison is about access, not one data set)', () => {
    expect(whos.length).toBe(4);
    const counts = whos.map((w) => w.orders.length);
    expect(new Set(counts).size).toBeGreaterThan(2);
  });

  it.each([
    ['stages supported before issue 37', ['basic'] as Family[], 1],
    [
      '$addFields/$set/$unset/$project expressions',
      ['basic', 'shape', 'expressions'] as Family[],
      2,
    ],
    ['$unwind options', ['basic', 'unwind'] as Family[], 3],
    ['$sortByCount/$bucket/$bucketAuto', ['basic', 'group'] as Family[], 4],
    ['$replaceRoot', ['basic', 'shape', 'replaceRoot'] as Family[], 5],
    ['$facet', ['basic', 'group', 'facet'] as Family[], 6],
    ['$setWindowFields', ['basic', 'window'] as Family[], 7],
    ['$lookup let/pipeline', ['basic', 'lookup', 'expressions'] as Family[], 9],
    ['every family together', [...FAMILIES] as Family[], 8],
  ])(
    '%s: every generated pipeline equals mingo for every identity',
    async (_name, families, offset) => {
      const problems = await check(families, SEED * 10 + offset, Math.ceil(ITERATIONS / 4));
      expect(problems.slice(0, 5)).toEqual([]);
    },
    600_000,
  );

  it("a $lookup never reaches another tenant's customer, even along a pointer to it", async () => {
    const acme = whos.find((w) => w.name.startsWith('master'))!;
    const data = await ours(acme, [
      { $lookup: { from: CUSTOMER, localField: 'customer', foreignField: 'objectId', as: 'c' } },
      { $unwind: { path: '$c', preserveNullAndEmptyArrays: true } },
      { $group: { _id: '$c.tenantId', n: { $sum: 1 }, names: { $addToSet: '$c.name' } } },
    ]);
    const tenants = (data.results as Row[]).map((row) => String(row._id ?? null)).sort();
    // Orders pointing at a globex customer join nothing (null), never the globex row.
    expect(tenants).toEqual(['acme', 'null']);
    expect(JSON.stringify(data)).not.toContain(GLOBEX_ONLY);
    // An uncorrelated pipeline join sees the whole joined class: still only this tenant's rows.
    const all = await ours(acme, [
      { $limit: 1 },
      {
        $lookup: {
          from: CUSTOMER,
          pipeline: [{ $group: { _id: '$tenantId', n: { $sum: 1 }, names: { $push: '$name' } } }],
          as: 'byTenant',
        },
      },
      { $project: { _id: 0, byTenant: 1 } },
    ]);
    const groups = (all.results as Row[])[0].byTenant as Row[];
    expect(groups.map((g) => g._id)).toEqual(['acme']);
    expect(groups[0].n).toBe(acme.customers.length);
    expect(JSON.stringify(all)).not.toContain(GLOBEX_ONLY);
  });

  it('every pipeline sample of docs/analytics-postgres.md equals mingo for every identity', async () => {
    const samples = docsPipelines();
    expect(samples.length).toBeGreaterThanOrEqual(13);
    // Shapes the generator does not write: string boundaries, $bucket output accumulators.
    samples.push([
      { $bucket: { groupBy: '$status', boundaries: ['a', 'm', 'q'], default: 'zzz' } },
      { $match: { count: { $gt: 0 } } },
    ]);
    const problems: string[] = [];
    for (const sample of samples) {
      const pipeline = JSON.parse(
        JSON.stringify(sample).replaceAll('"Customer"', JSON.stringify(CUSTOMER)),
      ) as Stage[];
      for (const who of whos) {
        const got = await ours(who, pipeline);
        const a = (got.results as Row[]).map((row) => canonical(row)).sort(byJson);
        const b = theirs(who, pipeline)
          .map((row) => canonical(row))
          .sort(byJson);
        if (JSON.stringify(a) !== JSON.stringify(b)) {
          problems.push(
            `${who.name}: ${JSON.stringify(sample)}\n  sql   ${JSON.stringify(a).slice(0, 500)}\n  mingo ${JSON.stringify(b).slice(0, 500)}`,
          );
        }
        if (who === whos[0] && !got.result_count)
          problems.push(`no rows: ${JSON.stringify(sample)}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('dates in time zones equal what Intl computes (the cases mingo gets wrong included)', async () => {
    const zones = ['America/New_York', 'Asia/Kolkata', 'Europe/Lisbon', 'Australia/Adelaide'];
    const master = whos[0];
    for (const timezone of zones) {
      const data = await ours(master, [
        {
          $project: {
            _id: 0,
            placedAt: 1,
            day: { $dateTrunc: { date: '$placedAt', unit: 'day', timezone } },
            text: { $dateToString: { date: '$placedAt', format: '%Y-%m-%d %H:%M', timezone } },
            hour: { $hour: { date: '$placedAt', timezone } },
            weekday: { $dayOfWeek: { date: '$placedAt', timezone } },
          },
        },
      ]);
      for (const row of data.results as Row[]) {
        const at = new Date((row.placedAt as { iso: string }).iso);
        const local = localParts(at, timezone);
        const expected = {
          day: zonedMidnight(local.year, local.month, local.day, timezone).toISOString(),
          text: `${local.year}-${pad(local.month)}-${pad(local.day)} ${pad(local.hour)}:${pad(local.minute)}`,
          hour: local.hour,
          weekday: local.weekday,
        };
        expect({
          timezone,
          at: at.toISOString(),
          ...(canonical({
            day: row.day,
            text: row.text,
            hour: row.hour,
            weekday: row.weekday,
          }) as Row),
        }).toEqual({ timezone, at: at.toISOString(), ...expected });
      }
    }
  });

  it('explain_query shows the plan of any supported pipeline without running it', async () => {
    const gen = new PipelineGenerator(new SeededRandom(SEED), [...FAMILIES], CUSTOMER);
    for (const who of whos) {
      for (let i = 0; i < 10; i++) {
        const { pipeline } = gen.pipeline(4);
        const envelope = await who.agent.execute('explain_query', { class_name: ORDER, pipeline });
        if (!envelope.success) throw new Error(`${envelope.error}: ${JSON.stringify(pipeline)}`);
        const data = envelope.data as Data;
        expect(typeof data.plan).toBe('string');
        expect(typeof data.collection_scan).toBe('boolean');
        expect(data.pipeline_stages).toBeGreaterThanOrEqual(pipeline.length);
      }
    }
    const master = whos[0].agent;
    const both = await master.execute('explain_query', {
      class_name: ORDER,
      where: { status: 'paid' },
      pipeline: [{ $count: 'n' }],
    });
    expect(both).toMatchObject({ success: false, error: expect.stringContaining('not both') });
  });

  it('refuses what stays unsupported before any SQL runs, naming the stage and the nearest way', async () => {
    const master = whos[0].agent;
    for (const [stage, nearest] of [
      [{ $sample: { size: 2 } }, /\$sort on a field and \$limit/],
      [{ $unionWith: CUSTOMER }, /second aggregate/],
    ] as const) {
      for (const tool of ['aggregate', 'explain_query']) {
        const envelope = await master.execute(tool, { class_name: ORDER, pipeline: [stage] });
        expect(envelope).toMatchObject({ success: false });
        const error = (envelope as { error: string }).error;
        expect(error).toContain(
          `'${Object.keys(stage)[0]}' is not supported on the PostgreSQL path`,
        );
        expect(error).toMatch(nearest);
      }
    }
  });

  it('a protected or non-allowlisted field is unavailable at every stage', async () => {
    const asAlice = whos.find((w) => w.name.startsWith('alice'))!;
    for (const pipeline of [
      [{ $group: { _id: '$secret' } }],
      [{ $addFields: { s: { $concat: ['$secret', 'x'] } } }],
      [
        { $lookup: { from: CUSTOMER, localField: 'customer', foreignField: 'objectId', as: 'c' } },
        { $unwind: '$c' },
        { $group: { _id: '$c.email' } },
      ],
      [{ $facet: { a: [{ $project: { secret: 1 } }] } }],
      [{ $setWindowFields: { sortBy: { secret: 1 }, output: { n: { $documentNumber: {} } } } }],
    ]) {
      const envelope = await asAlice.agent.execute('aggregate', { class_name: ORDER, pipeline });
      const text = JSON.stringify(envelope);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(EMAIL);
      if (envelope.success) {
        // Only the joined-document path can run: the email is simply not there.
        expect(JSON.stringify((envelope.data as Data).results)).not.toContain('@');
      }
    }
  });
});
