import { Client } from 'pg';
import type { AgentIdentity } from '../../libs/parse-agent/src/core/agent-identity';
import {
  AccessDeniedError,
  AgentCancelledError,
  ParseAgentError,
  ParseRequestError,
} from '../../libs/parse-agent/src/core/errors';
import { DataRouter } from '../../libs/parse-agent/src/data/data-router';
import { ParseRestClient } from '../../libs/parse-agent/src/data/parse-rest/parse-rest-client';
import { ParseRestDataPathProvider } from '../../libs/parse-agent/src/data/parse-rest/parse-rest-data-path';
import {
  DatabaseTimeoutError,
  readOnly,
} from '../../libs/parse-agent/src/data/postgres/pg-read-transaction';
import { PostgresDataAccess } from '../../libs/parse-agent/src/data/postgres/postgres-data-access';
import type { PostgresDataPath } from '../../libs/parse-agent/src/data/postgres/postgres-data-path';
import { PostgresDataPathProvider } from '../../libs/parse-agent/src/data/postgres/postgres-provider';
import type { GroupOperation } from '../../libs/parse-agent/src/ports/data-path';
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  pointer,
  type Acl,
  type SeededUser,
} from '../harness/fixtures';
import { createAgentTestBed } from '../harness/agent-module';
import { findRows, testParseConfig, type RestAuth } from '../harness/parse-rest';

/**
 * The direct PostgreSQL DataPath against Parse REST: for every identity, each answer equals the one
 * computed here from the rows Parse Server itself returns to that identity (ACL, CLP and
 * protectedFields enforced by Parse). Real Parse Server, real PostgreSQL.
 */
const run = Date.now().toString(36);
const ORDER = `PgpOrder_${run}`;
const CUSTOMER = `PgpCustomer_${run}`;
const NOTE = `PgpNote_${run}`;
const LOCKED = `PgpLocked_${run}`;
const STATUSES = ['new', 'paid', 'shipped', 'void'];
const TENANTS = ['acme', 'globex'];

type Row = Record<string, unknown>;
interface Who {
  name: string;
  identity: AgentIdentity;
  /** The REST identity whose rows are the oracle. */
  rest: RestAuth;
}

/** A small deterministic generator, so a failing query can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function identity(partial: Partial<AgentIdentity>): AgentIdentity {
  return {
    agentId: `a-${Math.random()}`,
    permissions: 'readonly',
    authType: partial.sessionToken
      ? 'session_token'
      : partial.aclUser
        ? 'acl_user'
        : partial.aclRole
          ? 'acl_role'
          : 'master_key',
    usingMasterKey: !partial.sessionToken && !partial.aclUser && !partial.aclRole,
    ...partial,
  };
}

/** Rows without their ACL (the direct path does not return it), included objects too. */
const stripAcl = (row: Row): Row =>
  Object.fromEntries(
    Object.entries(row)
      .filter(([k]) => k !== 'ACL')
      .map(([k, v]) => [
        k,
        typeof v === 'object' && v !== null && (v as Row).__type === 'Object'
          ? stripAcl(v as Row)
          : v,
      ]),
  );

describe('PostgresDataPath against Parse REST (real Parse Server, real PostgreSQL)', () => {
  let access: PostgresDataAccess;
  let parse: ParseRestClient;
  let provider: PostgresDataPathProvider;
  let db: Client;
  let alice: SeededUser;
  let bob: SeededUser;
  let carol: SeededUser;
  let staffer: SeededUser;
  let whos: Who[];
  const staffRole = `pgp_staff_${run}`;
  const adminRole = `pgp_admin_${run}`;
  let forbiddenIds: string[] = [];

  const pathFor = (who: Who) => provider.bind(who.identity);
  const rest = (className: string, who: Who, where: Row = {}) =>
    findRows(className, where, who.rest, { limit: '1000' });

  beforeAll(async () => {
    alice = await createUser(`pgp_alice_${run}`);
    bob = await createUser(`pgp_bob_${run}`);
    carol = await createUser(`pgp_carol_${run}`);
    staffer = await createUser(`pgp_staffer_${run}`);
    await createRole(staffRole, { users: [bob.objectId, staffer.objectId] });
    await createRole(adminRole, { users: [carol.objectId], inheritedBy: [staffRole] });

    await defineClass(CUSTOMER, { name: { type: 'String' }, tier: { type: 'String' } });
    await defineClass(
      ORDER,
      {
        status: { type: 'String' },
        amount: { type: 'Number' },
        customer: { type: 'Pointer', targetClass: CUSTOMER },
        tags: { type: 'Array' },
        meta: { type: 'Object' },
        placedAt: { type: 'Date' },
        tenant: { type: 'String' },
        secret: { type: 'String' },
      },
      {
        find: { '*': true },
        get: { '*': true },
        count: { '*': true },
        create: {},
        update: {},
        delete: {},
        addField: {},
        // Everyone but admins (and the master key) is denied `secret`.
        protectedFields: { '*': ['secret'], [`role:${adminRole}`]: [] },
      },
    );
    // Pointer permissions: only the owner reads a note.
    await defineClass(
      NOTE,
      { owner: { type: 'Pointer', targetClass: '_User' }, text: { type: 'String' } },
      {
        find: {},
        get: {},
        count: {},
        create: {},
        update: {},
        delete: {},
        addField: {},
        readUserFields: ['owner'],
        protectedFields: {},
      },
    );
    // Class-level: only the admin role may find.
    await defineClass(
      LOCKED,
      { text: { type: 'String' } },
      {
        find: { [`role:${adminRole}`]: true },
        get: { [`role:${adminRole}`]: true },
        count: { [`role:${adminRole}`]: true },
        create: {},
        update: {},
        delete: {},
        addField: {},
        protectedFields: {},
      },
    );

    const acls: Array<Acl | undefined> = [
      undefined,
      { '*': { read: true } },
      { [alice.objectId]: { read: true } },
      { [bob.objectId]: { read: true } },
      { [`role:${adminRole}`]: { read: true } },
      { [`role:${staffRole}`]: { read: true } },
      { [alice.objectId]: { read: true }, [carol.objectId]: { read: true } },
      {},
    ];
    const customers: string[] = [];
    for (let i = 0; i < 5; i++) {
      customers.push(
        await createObject(CUSTOMER, { name: `c${i}`, tier: i % 2 ? 'gold' : 'basic' }, acls[i]),
      );
    }
    const created: Array<Promise<string>> = [];
    for (let i = 0; i < 96; i++) {
      const placedAt = new Date(Date.UTC(2024, i % 7, 1 + (i % 3), (i * 5) % 24, 30)).toISOString();
      const fields: Row = {
        status: STATUSES[i % 4],
        amount: (i * 37) % 101,
        customer: pointer(CUSTOMER, customers[i % 5]),
        tags: i % 3 === 0 ? ['a', 'b'] : i % 3 === 1 ? ['b'] : [],
        meta: { channel: i % 2 ? 'web' : 'shop', score: i % 7 },
        placedAt: { __type: 'Date', iso: placedAt },
        tenant: TENANTS[Math.floor(i / 3) % 2],
        secret: `s${i}`,
      };
      if (i % 11 === 5) delete fields.status;
      if (i % 13 === 7) delete fields.amount;
      created.push(createObject(ORDER, fields, acls[i % acls.length]));
    }
    const ids = await Promise.all(created);
    forbiddenIds = ids.filter((_, i) => i % acls.length === acls.length - 1);
    for (const [i, owner] of [alice, alice, bob, carol].entries()) {
      await createObject(NOTE, { owner: pointer('_User', owner.objectId), text: `n${i}` });
    }
    await createObject(LOCKED, { text: 'admins only' });

    const cfg = testParseConfig();
    parse = new ParseRestClient(cfg);
    access = new PostgresDataAccess({ uri: cfg.databaseURI, schemaCacheTtlMs: 0 }, parse);
    provider = new PostgresDataPathProvider(access);
    db = new Client({ connectionString: cfg.databaseURI });
    await db.connect();

    whos = [
      {
        name: 'alice',
        identity: identity({ sessionToken: alice.sessionToken }),
        rest: { sessionToken: alice.sessionToken },
      },
      {
        name: 'bob',
        identity: identity({ sessionToken: bob.sessionToken }),
        rest: { sessionToken: bob.sessionToken },
      },
      {
        name: 'carol',
        identity: identity({ sessionToken: carol.sessionToken }),
        rest: { sessionToken: carol.sessionToken },
      },
      // aclUser acts as alice; the oracle is alice's own session.
      {
        name: 'aclUser(alice)',
        identity: identity({ aclUser: alice.objectId }),
        rest: { sessionToken: alice.sessionToken },
      },
      // aclRole acts as a member of staff; staffer is such a member and nothing else names them.
      {
        name: 'aclRole(staff)',
        identity: identity({ aclRole: staffRole }),
        rest: { sessionToken: staffer.sessionToken },
      },
      { name: 'master', identity: identity({}), rest: { masterKey: true } },
    ];
  }, 180000);

  afterAll(async () => {
    await db?.end();
    await access?.close();
    parse?.close();
  });

  it('find returns the same rows, in the same API shape, as Parse REST for every identity', async () => {
    for (const who of whos) {
      const expected = (await rest(ORDER, who)).map(stripAcl);
      const rows = await pathFor(who).find(ORDER, { limit: 1000, order: 'objectId' });
      const byId = (list: Row[]) =>
        [...list].sort((a, b) => String(a.objectId).localeCompare(String(b.objectId)));
      expect({ who: who.name, rows: byId(rows) }).toEqual({ who: who.name, rows: byId(expected) });
      if (who.name !== 'master') {
        expect(rows.filter((r) => forbiddenIds.includes(r.objectId as string))).toEqual([]);
      }
    }
  });

  it('get, count, keys and include follow Parse REST (include resolves only readable targets)', async () => {
    for (const who of whos) {
      const expected = await findRows(ORDER, {}, who.rest, {
        limit: '1000',
        include: 'customer',
        keys: 'status,customer',
        order: 'objectId',
      });
      const rows = await pathFor(who).find(ORDER, {
        limit: 1000,
        include: ['customer'],
        keys: ['status', 'customer'],
        order: 'objectId',
      });
      expect({ who: who.name, rows }).toEqual({ who: who.name, rows: expected.map(stripAcl) });
      expect(await pathFor(who).count(ORDER, { status: 'paid' })).toBe(
        (await rest(ORDER, who, { status: 'paid' })).length,
      );
      const one = expected[0];
      expect(stripAcl((await pathFor(who).get(ORDER, one.objectId as string, {})) ?? {})).toEqual(
        stripAcl((await rest(ORDER, who, { objectId: one.objectId }))[0]),
      );
      if (who.name !== 'master') {
        expect(await pathFor(who).get(ORDER, forbiddenIds[0], {})).toBeUndefined();
      }
    }
  });

  it('enforces CLP as Parse does: pointer permissions, role-only classes, protected fields', async () => {
    for (const who of whos) {
      const notes = (await rest(NOTE, who)).map((r) => r.objectId).sort();
      const sqlNotes = (await pathFor(who).find(NOTE, { limit: 100 }))
        .map((r) => r.objectId)
        .sort();
      expect({ who: who.name, notes: sqlNotes }).toEqual({ who: who.name, notes });
      const locked = await rest(LOCKED, who).then(
        (r) => r.length,
        () => 'denied',
      );
      const sqlLocked = await pathFor(who)
        .count(LOCKED, {})
        .catch((e: unknown) => (e instanceof AccessDeniedError ? 'denied' : e));
      expect({ who: who.name, locked: sqlLocked }).toEqual({ who: who.name, locked });
    }
    // alice may not see `secret`: never selected, never groupable; carol (admin) may.
    const alicePath = pathFor(whos[0]);
    await expect(
      alicePath.groupBy!(ORDER, { field: 'secret', operation: 'count', limit: 10 }),
    ).rejects.toThrow(AccessDeniedError);
    await expect(alicePath.count(ORDER, { secret: 's1' })).rejects.toThrow(/Unknown field/);
    expect((await alicePath.find(ORDER, { limit: 5 })).some((r) => 'secret' in r)).toBe(false);
    const carolGroups = await pathFor(whos[2]).groupBy!(ORDER, {
      field: 'secret',
      operation: 'count',
      limit: 500,
    });
    expect(carolGroups.length).toBe((await rest(ORDER, whos[2])).length);
  });

  describe('a few hundred generated analytics queries equal the REST computation', () => {
    const random = prng(20241122);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
    function genWhere(): Row {
      const parts: Row[] = [];
      const n = Math.floor(random() * 3);
      for (let i = 0; i < n; i++) {
        switch (Math.floor(random() * 8)) {
          case 0:
            parts.push({ status: pick(STATUSES) });
            break;
          case 1:
            parts.push({ status: { $in: [pick(STATUSES), pick(STATUSES)] } });
            break;
          case 2:
            parts.push({
              amount: { $gte: Math.floor(random() * 60), $lt: 40 + Math.floor(random() * 61) },
            });
            break;
          case 3:
            parts.push({ tenant: pick(TENANTS) });
            break;
          case 4:
            parts.push({ tags: { $all: [pick(['a', 'b'])] } });
            break;
          case 5:
            parts.push({ status: { $exists: random() < 0.5 } });
            break;
          case 6:
            parts.push({ $or: [{ status: pick(STATUSES) }, { amount: { $lt: 20 } }] });
            break;
          default:
            parts.push({
              placedAt: {
                $gte: {
                  __type: 'Date',
                  iso: `2024-0${1 + Math.floor(random() * 6)}-01T00:00:00.000Z`,
                },
              },
            });
        }
      }
      const merged: Row = {};
      for (const p of parts) {
        const key = Object.keys(p)[0];
        if (key in merged) continue;
        Object.assign(merged, p);
      }
      return merged;
    }
    const OPS: GroupOperation[] = ['count', 'sum', 'avg', 'min', 'max'];
    const round = (v: unknown) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v);

    function fold(rows: Row[], op: GroupOperation): number | null {
      if (op === 'count') return rows.length;
      const values = rows.map((r) => r.amount).filter((v): v is number => typeof v === 'number');
      if (op === 'sum') return values.reduce((a, b) => a + b, 0);
      if (!values.length) return null;
      if (op === 'avg') return values.reduce((a, b) => a + b, 0) / values.length;
      return op === 'min' ? Math.min(...values) : Math.max(...values);
    }

    function groupRows(
      rows: Row[],
      key: (r: Row) => unknown,
      op: GroupOperation,
    ): Map<unknown, number | null> {
      const groups = new Map<unknown, Row[]>();
      for (const r of rows) {
        const k = key(r) ?? null;
        groups.set(k, [...(groups.get(k) ?? []), r]);
      }
      return new Map([...groups].map(([k, list]) => [k, fold(list, op)]));
    }

    const monthKey = (iso: string, tz: string) => {
      const f = new Intl.DateTimeFormat('en-CA', {
        timeZone: tz,
        year: 'numeric',
        month: '2-digit',
      });
      return f.format(new Date(iso)).slice(0, 7);
    };

    it('count, group_by, group_by_date, distinct and aggregate for six identities', async () => {
      let checked = 0;
      for (let q = 0; q < 40; q++) {
        const where = genWhere();
        const op = pick(OPS);
        const field = pick(['status', 'tenant', 'customer']);
        const tz = pick(['UTC', 'America/New_York', 'Asia/Kolkata', '+05:30']);
        for (const who of whos) {
          const path: PostgresDataPath = pathFor(who);
          const rows = await rest(ORDER, who, where).catch((e: Error) => {
            throw new Error(`REST failed for ${JSON.stringify(where)}: ${e.message}`);
          });
          const label = { who: who.name, where, op, field, tz };

          expect({ ...label, count: await path.count(ORDER, where) }).toEqual({
            ...label,
            count: rows.length,
          });

          const keyOf = (r: Row) =>
            field === 'customer' ? (r.customer as { objectId: string }).objectId : r[field];
          const expectedGroups = groupRows(rows, keyOf, op);
          const groups = await path.groupBy!(ORDER, {
            field,
            operation: op,
            valueField: op === 'count' ? undefined : 'amount',
            where,
            limit: 100,
          });
          expect({ ...label, groups: new Map(groups.map((g) => [g.key, round(g.value)])) }).toEqual(
            {
              ...label,
              groups: new Map([...expectedGroups].map(([k, v]) => [k, round(v)])),
            },
          );

          const offsetTz = tz === '+05:30' ? 'Asia/Kolkata' : tz; // same offset, no DST
          const byMonth = groupRows(
            rows.filter((r) => r.placedAt),
            (r) => monthKey((r.placedAt as { iso: string }).iso, offsetTz),
            op,
          );
          const dated = await path.groupByDate!(ORDER, {
            field: 'placedAt',
            interval: 'month',
            timezone: tz,
            operation: op,
            valueField: op === 'count' ? undefined : 'amount',
            where,
            limit: 100,
          });
          expect({
            ...label,
            months: new Map(
              dated.map((g) => [monthKey((g.key as Date).toISOString(), offsetTz), round(g.value)]),
            ),
          }).toEqual({ ...label, months: new Map([...byMonth].map(([k, v]) => [k, round(v)])) });
          // Each key is the instant the month starts in the zone.
          for (const g of dated) {
            const local = new Intl.DateTimeFormat('en-GB', {
              timeZone: offsetTz,
              day: '2-digit',
              hour: '2-digit',
              minute: '2-digit',
              hourCycle: 'h23',
            }).format(g.key as Date);
            expect(local).toBe('01, 00:00');
          }

          const distinctField = pick(['status', 'tags', 'tenant']);
          const values = await path.distinct!(ORDER, { field: distinctField, where, limit: 100 });
          const expectedValues = [
            ...new Set(
              rows.flatMap((r) =>
                Array.isArray(r[distinctField])
                  ? (r[distinctField] as unknown[])
                  : r[distinctField] === undefined
                    ? []
                    : [r[distinctField]],
              ),
            ),
          ].sort();
          expect({ ...label, distinctField, values }).toEqual({
            ...label,
            distinctField,
            values: expectedValues,
          });

          const agg = await path.aggregate!(ORDER, [
            { $match: where },
            { $group: { _id: '$tenant', n: { $sum: 1 }, total: { $sum: '$amount' } } },
            { $sort: { _id: 1 } },
          ]);
          const expectedAgg = [...groupRows(rows, (r) => r.tenant, 'count')]
            .map(([k, n]) => ({
              _id: k,
              n,
              total: fold(
                rows.filter((r) => r.tenant === k),
                'sum',
              ),
            }))
            .sort((a, b) => String(a._id).localeCompare(String(b._id)));
          expect({ ...label, agg }).toEqual({ ...label, agg: expectedAgg });
          checked += 5;
        }
      }
      expect(checked).toBeGreaterThanOrEqual(1000);
    }, 240000);
  });

  it('aggregate: $lookup along a pointer reads the joined class with the same scope', async () => {
    for (const who of whos) {
      const orders = await rest(ORDER, who);
      const customers = new Map((await rest(CUSTOMER, who)).map((c) => [c.objectId as string, c]));
      const expected: Record<string, number> = {};
      for (const o of orders) {
        const c = customers.get((o.customer as { objectId: string }).objectId);
        if (c) expected[c.tier as string] = (expected[c.tier as string] ?? 0) + 1;
      }
      const rows = await pathFor(who).aggregate!(ORDER, [
        { $lookup: { from: CUSTOMER, localField: 'customer', foreignField: 'objectId', as: 'c' } },
        { $unwind: '$c' },
        { $group: { _id: '$c.tier', n: { $sum: 1 } } },
      ]);
      expect({ who: who.name, tiers: Object.fromEntries(rows.map((r) => [r._id, r.n])) }).toEqual({
        who: who.name,
        tiers: expected,
      });
    }
    // The scoped let/pipeline form the pipeline validator writes is understood too.
    const [alice] = whos;
    const scoped = await pathFor(alice).aggregate!(ORDER, [
      {
        $lookup: {
          from: CUSTOMER,
          let: { pa_local: '$customer' },
          pipeline: [
            { $match: { tier: 'gold' } },
            {
              $match: {
                $expr: {
                  $in: [
                    '$objectId',
                    { $cond: [{ $isArray: '$$pa_local' }, '$$pa_local', ['$$pa_local']] },
                  ],
                },
              },
            },
            { $project: { objectId: 1, tier: 1 } },
          ],
          as: 'c',
        },
      },
      { $unwind: '$c' },
      { $group: { _id: '$c.tier', n: { $sum: 1 } } },
    ]);
    expect(scoped.every((r) => r._id === 'gold')).toBe(true);
  });

  it('routes: REST keeps session row reads, the direct path takes analytics and ACL scopes', () => {
    const router = new DataRouter([new ParseRestDataPathProvider(parse), provider]);
    const [alice, , , aclUser, aclRole, master] = whos;
    expect(router.pathFor('find', alice.identity).kind).toBe('parse-rest');
    expect(router.pathFor('group_by', alice.identity).kind).toBe('postgres');
    expect(router.pathFor('aggregate', master.identity).kind).toBe('postgres');
    expect(router.pathFor('find', aclUser.identity).kind).toBe('postgres');
    expect(router.pathFor('count', aclRole.identity).kind).toBe('postgres');
    expect(() => router.pathFor('write', aclUser.identity)).toThrow(/only reads/);
  });

  it('makes aclUser and aclRole agents constructible, and their tools read only what they may', async () => {
    const bed = await createAgentTestBed([], {
      postgres: { uri: testParseConfig().databaseURI },
      // The suite's classes have no model; expose them (the default hides unregistered classes).
      unregisteredClasses: 'visible',
    });
    try {
      const asAlice = bed.factory.create({ aclUser: alice.objectId });
      const counted = await asAlice.execute('count_objects', { class_name: ORDER });
      expect(counted).toMatchObject({
        success: true,
        data: { count: (await rest(ORDER, whos[0])).length },
      });
      const staff = bed.factory.create({ aclRole: staffRole });
      const found = await staff.execute('query_class', {
        class_name: ORDER,
        limit: 1000,
        keys: ['status'],
      });
      expect(found.success).toBe(true);
      const ids = ((found as { data: { results: Row[] } }).data.results ?? []).map(
        (r) => r.objectId,
      );
      const allowed = new Set((await rest(ORDER, whos[4])).map((r) => r.objectId));
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.filter((id) => !allowed.has(id))).toEqual([]);
      expect(ids.filter((id) => forbiddenIds.includes(id as string))).toEqual([]);
    } finally {
      await bed.close();
    }
    // Without a direct path an ACL scope cannot be served, so the agent is refused at creation.
    const restOnly = await createAgentTestBed([]);
    try {
      expect(() => restOnly.factory.create({ aclUser: alice.objectId })).toThrow(/postgres/);
    } finally {
      await restOnly.close();
    }
  });

  it('refuses or binds injection strings in every argument that reaches SQL', async () => {
    const hostile = [
      `'; DROP TABLE "_User"; --`,
      `" OR 1=1 --`,
      `x"; SELECT pg_sleep(5); --`,
      `$1`,
      `status\u0000`,
      `🙂'"\\`,
      `1e999`,
      `role:*`,
      `*`,
    ];
    const path = pathFor(whos[0]);
    const outcomes: string[] = [];
    const attempt = async (label: string, call: () => Promise<unknown>) => {
      try {
        await call();
        outcomes.push(`${label}: ran`);
      } catch (error) {
        // A refusal is a library error; a SQL syntax error would mean text reached the SQL.
        expect({ label, error: error instanceof ParseAgentError }).toEqual({ label, error: true });
        expect({ label, sql: error instanceof ParseRequestError }).toEqual({ label, sql: false });
        outcomes.push(`${label}: refused`);
      }
    };
    for (const h of hostile) {
      await attempt(`class ${h}`, () => path.count(h, {}));
      await attempt(`where key ${h}`, () => path.count(ORDER, { [h]: 1 }));
      await attempt(`where value ${h}`, () => path.count(ORDER, { status: h, 'meta.channel': h }));
      await attempt(`regex ${h}`, () => path.count(ORDER, { status: { $regex: h } }));
      await attempt(`group field ${h}`, () =>
        path.groupBy!(ORDER, { field: h, operation: 'count', limit: 5 }),
      );
      await attempt(`value field ${h}`, () =>
        path.groupBy!(ORDER, { field: 'status', operation: 'sum', valueField: h, limit: 5 }),
      );
      await attempt(`timezone ${h}`, () =>
        path.groupByDate!(ORDER, {
          field: 'placedAt',
          interval: 'day',
          timezone: h,
          operation: 'count',
          limit: 5,
        }),
      );
      await attempt(`interval ${h}`, () =>
        path.groupByDate!(ORDER, {
          field: 'placedAt',
          interval: h as 'day',
          timezone: 'UTC',
          operation: 'count',
          limit: 5,
        }),
      );
      await attempt(`distinct ${h}`, () => path.distinct!(ORDER, { field: h, limit: 5 }));
      await attempt(`keys ${h}`, () => path.find(ORDER, { keys: [h], limit: 5 }));
      await attempt(`order ${h}`, () => path.find(ORDER, { order: h, limit: 5 }));
      await attempt(`include ${h}`, () => path.find(ORDER, { include: [h], limit: 5 }));
      await attempt(`get ${h}`, () => path.get(ORDER, h, {}));
      await attempt(`$group name ${h}`, () =>
        path.aggregate!(ORDER, [{ $group: { _id: null, [h]: { $sum: 1 } } }]),
      );
      await attempt(`$project ${h}`, () =>
        path.aggregate!(ORDER, [{ $project: { [h]: '$status' } }]),
      );
      await attempt(`$lookup from ${h}`, () =>
        path.aggregate!(ORDER, [
          { $lookup: { from: h, localField: 'customer', foreignField: 'objectId', as: 'c' } },
        ]),
      );
      await attempt(`aclRole ${h}`, () => provider.bind(identity({ aclRole: h })).count(ORDER, {}));
      await attempt(`aclUser ${h}`, () => provider.bind(identity({ aclUser: h })).count(ORDER, {}));
    }
    // Hostile principals only ever see public rows.
    const publicCount = (await findRows(ORDER, {}, {}, { limit: '1000' })).length;
    expect(await provider.bind(identity({ aclUser: `' OR TRUE --` })).count(ORDER, {})).toBe(
      publicCount,
    );
    expect(await provider.bind(identity({ aclRole: `x' OR '1'='1` })).count(ORDER, {})).toBe(
      publicCount,
    );
    const users = await db.query('SELECT count(*)::int AS n FROM "_User"');
    expect(users.rows[0].n).toBeGreaterThanOrEqual(4);
    expect(outcomes.length).toBe(hostile.length * 18);
  });

  it('runs read-only', async () => {
    // The transaction is read-only: even a statement that slipped through could not write.
    await expect(
      readOnly(access.pool, (q) => q({ text: `DELETE FROM "${LOCKED}"`, values: [] })),
    ).rejects.toThrow(ParseRequestError);
    expect((await db.query(`SELECT count(*)::int AS n FROM "${LOCKED}"`)).rows[0].n).toBe(1);
  });

  describe('time limits and cancellation stop the backend query', () => {
    let locker: Client;
    beforeEach(async () => {
      locker = new Client({ connectionString: testParseConfig().databaseURI });
      await locker.connect();
      // Holding an exclusive lock makes every read of the table wait inside PostgreSQL.
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${ORDER}" IN ACCESS EXCLUSIVE MODE`);
    });
    afterEach(async () => {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    });

    const waiting = async () =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()`,
          [`%FROM "${ORDER}"%`],
        )
      ).rows[0].n as number;

    it('an aborted call cancels its backend query', async () => {
      const controller = new AbortController();
      const started = Date.now();
      const call = pathFor(whos[0]).groupBy!(
        ORDER,
        { field: 'status', operation: 'count', limit: 10 },
        { signal: controller.signal, maxTimeMS: 60_000 },
      );
      const settled = call.then(
        () => 'resolved',
        (e: unknown) => e,
      );
      for (let i = 0; i < 50 && (await waiting()) === 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await waiting()).toBe(1);
      controller.abort();
      expect(await settled).toBeInstanceOf(AgentCancelledError);
      expect(Date.now() - started).toBeLessThan(10_000);
      // The backend stopped: nothing of ours is still running while the lock is held.
      expect(await waiting()).toBe(0);
    });

    it('statement_timeout from the call time limit stops a slow query', async () => {
      const started = Date.now();
      await expect(
        pathFor(whos[0]).groupBy!(
          ORDER,
          { field: 'status', operation: 'count', limit: 10 },
          { maxTimeMS: 300 },
        ),
      ).rejects.toThrow(DatabaseTimeoutError);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await waiting()).toBe(0);
    });
  });
});
