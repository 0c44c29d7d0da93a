import { Client } from 'pg';
import { AccessDeniedError } from '../../libs/parse-agent/src/core/errors';
import type { Principals } from '../../libs/parse-agent/src/data/postgres/acl-clause';
import { countSql } from '../../libs/parse-agent/src/data/postgres/count-sql';
import { distinctSql } from '../../libs/parse-agent/src/data/postgres/distinct-sql';
import { groupByDateSql } from '../../libs/parse-agent/src/data/postgres/group-by-date-sql';
import { groupBySql } from '../../libs/parse-agent/src/data/postgres/group-by-sql';
import { compilePipeline } from '../../libs/parse-agent/src/data/postgres/pipeline-to-sql';
import {
  schemaFromRow,
  schemaRowsQuery,
  type PgClassSchema,
  type PgSchemaRow,
} from '../../libs/parse-agent/src/data/postgres/pg-schema';
import {
  isUndefinedTableError,
  userPrincipals,
  userRolesQuery,
} from '../../libs/parse-agent/src/data/postgres/role-principals-sql';
import type { SqlContext } from '../../libs/parse-agent/src/data/postgres/scoped-source';
import { selectSql } from '../../libs/parse-agent/src/data/postgres/select-sql';
import type { SqlQuery } from '../../libs/parse-agent/src/data/postgres/sql-params';
import type { Where } from '../../libs/parse-agent/src/data/postgres/where-to-sql';
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  pointer,
  type Acl,
  type SeededUser,
} from '../harness/fixtures';
import { findRows, testParseConfig, type RestAuth } from '../harness/parse-rest';

/**
 * The compiled SQL run on the real Parse-on-PostgreSQL database, checked against what Parse REST
 * returns for the same reader (Parse enforces the ACL there): the differential oracle.
 */
const run = Date.now().toString(36);
const ORDER = `PgsqlOrder_${run}`;
const CUSTOMER = `PgsqlCustomer_${run}`;
const STATUSES = ['new', 'paid', 'shipped', 'void'];
const TZ = 'America/New_York';

type Row = Record<string, unknown>;
interface Reader {
  name: string;
  auth: RestAuth;
  principals: Principals;
}

describe('PostgreSQL SQL compiler against Parse REST (real Parse Server, real PostgreSQL)', () => {
  let db: Client;
  let alice: SeededUser;
  let bob: SeededUser;
  let carol: SeededUser;
  let dave: SeededUser;
  let schemas: Record<string, PgClassSchema>;
  let readers: Reader[];
  const adminRole = `pg_admin_${run}`;
  const staffRole = `pg_staff_${run}`;
  let forbiddenIds: string[] = [];

  const query = async (q: SqlQuery): Promise<Row[]> => (await db.query(q.text, q.values)).rows;

  async function principalsOf(user: SeededUser): Promise<string[]> {
    try {
      return userPrincipals(user.objectId, (await query(userRolesQuery(user.objectId))) as never);
    } catch (error) {
      if (isUndefinedTableError(error)) return userPrincipals(user.objectId, []);
      throw error;
    }
  }

  function ctxFor(reader: Reader, extra: Partial<Record<string, Where>> = {}): SqlContext {
    return {
      schemas,
      scopeFor: (className) => ({ principals: reader.principals, where: extra[className] }),
      columnsFor: (className) => Object.keys(schemas[className].fields),
    };
  }

  const restRows = (className: string, reader: Reader, where: Where = {}) =>
    findRows(className, where, reader.auth, { limit: '1000' });

  beforeAll(async () => {
    alice = await createUser(`pg_alice_${run}`);
    bob = await createUser(`pg_bob_${run}`);
    carol = await createUser(`pg_carol_${run}`);
    dave = await createUser(`pg_dave_${run}`);
    await createRole(staffRole, { users: [bob.objectId] });
    // bob (staff) inherits admin: staff is in admin's `roles` relation.
    await createRole(adminRole, { users: [carol.objectId], inheritedBy: [staffRole] });

    await defineClass(CUSTOMER, { name: { type: 'String' }, tier: { type: 'String' } });
    await defineClass(ORDER, {
      status: { type: 'String' },
      amount: { type: 'Number' },
      customer: { type: 'Pointer', targetClass: CUSTOMER },
      tags: { type: 'Array' },
      meta: { type: 'Object' },
      placedAt: { type: 'Date' },
      tenant: { type: 'String' },
      secret: { type: 'String' },
    });

    const acls: Array<Acl | undefined> = [
      undefined, // no ACL: public
      { '*': { read: true } },
      { [alice.objectId]: { read: true } },
      { [bob.objectId]: { read: true } },
      { [`role:${adminRole}`]: { read: true } },
      { [`role:${staffRole}`]: { read: true } },
      { [alice.objectId]: { read: true }, [carol.objectId]: { read: true } },
      {}, // nobody but the master key
    ];
    const customers: string[] = [];
    for (let i = 0; i < 4; i++) {
      customers.push(
        await createObject(
          CUSTOMER,
          { name: `c${i}`, tier: i % 2 ? 'gold' : 'basic' },
          acls[i % 4],
        ),
      );
    }
    const created: Array<Promise<string>> = [];
    for (let i = 0; i < 48; i++) {
      // Times near the start of a UTC month: in New York some fall in the previous month.
      const placedAt = new Date(Date.UTC(2024, i % 5, 1, (i * 7) % 24, 30)).toISOString();
      const fields: Row = {
        status: STATUSES[i % 4],
        amount: (i * 37) % 101,
        customer: pointer(CUSTOMER, customers[i % 4]),
        tags: i % 3 === 0 ? ['a', 'b'] : i % 3 === 1 ? ['b'] : [],
        meta: { channel: i % 2 ? 'web' : 'shop', score: i % 7 },
        placedAt: { __type: 'Date', iso: placedAt },
        tenant: i % 2 ? 'acme' : 'globex',
        secret: `s${i}`,
      };
      if (i % 11 === 5) delete fields.status; // some rows without a status
      created.push(createObject(ORDER, fields, acls[i % acls.length]));
    }
    const ids = await Promise.all(created);
    forbiddenIds = ids.filter((_, i) => i % acls.length === acls.length - 1);

    db = new Client({ connectionString: testParseConfig().databaseURI });
    await db.connect();
    const rows = (await query(schemaRowsQuery([ORDER, CUSTOMER]))) as unknown as PgSchemaRow[];
    schemas = Object.fromEntries(rows.map((r) => [r.className, schemaFromRow(r).schema]));

    readers = [
      {
        name: 'alice',
        auth: { sessionToken: alice.sessionToken },
        principals: await principalsOf(alice),
      },
      {
        name: 'bob',
        auth: { sessionToken: bob.sessionToken },
        principals: await principalsOf(bob),
      },
      {
        name: 'carol',
        auth: { sessionToken: carol.sessionToken },
        principals: await principalsOf(carol),
      },
      {
        name: 'dave',
        auth: { sessionToken: dave.sessionToken },
        principals: await principalsOf(dave),
      },
      { name: 'anonymous', auth: {}, principals: [] },
      { name: 'master', auth: { masterKey: true }, principals: 'master' },
    ];
  }, 120000);

  afterAll(async () => {
    await db?.end();
  });

  it('reads the class layout from _SCHEMA', () => {
    expect(schemas[ORDER].fields.customer).toEqual({ type: 'Pointer', targetClass: CUSTOMER });
    expect(schemas[ORDER].fields.placedAt).toEqual({ type: 'Date' });
    expect(schemas[ORDER].fields.objectId).toEqual({ type: 'String' });
    expect(Object.keys(schemas[ORDER].fields).some((f) => f.startsWith('_'))).toBe(false);
  });

  it('expands roles with inheritance', () => {
    const [a, b, c, d] = readers;
    expect(a.principals).toEqual(['*', alice.objectId]);
    expect(b.principals).toEqual(
      expect.arrayContaining(['*', bob.objectId, `role:${staffRole}`, `role:${adminRole}`]),
    );
    expect(c.principals).toEqual(['*', carol.objectId, `role:${adminRole}`]);
    expect(d.principals).toEqual(['*', dave.objectId]);
  });

  const wheres: Where[] = [
    {},
    { status: { $in: ['paid', 'void'] } },
    { amount: { $gte: 20, $lt: 80 } },
    { status: { $exists: false } },
    { status: { $ne: 'paid' } },
    { tags: { $in: ['a'] } },
    { tags: { $nin: ['a'] } },
    { tags: { $all: ['a', 'b'] } },
    { 'meta.channel': 'web', 'meta.score': { $gt: 2 } },
    { $or: [{ status: 'new' }, { amount: { $lt: 10 } }] },
    { status: { $regex: '^P', $options: 'i' } },
    { placedAt: { $gte: { __type: 'Date', iso: '2024-03-01T00:00:00.000Z' } } },
  ];

  it('counts exactly what Parse REST returns to each reader, for many wheres', async () => {
    for (const reader of readers) {
      for (const where of wheres) {
        const rest = await restRows(ORDER, reader, where).catch((e: Error) => {
          throw new Error(`REST failed for ${JSON.stringify(where)}: ${e.message}`);
        });
        const [sql] = await query(countSql({ className: ORDER, where }, ctxFor(reader)));
        expect({ reader: reader.name, where, count: sql.count }).toEqual({
          reader: reader.name,
          where,
          count: rest.length,
        });
      }
    }
  });

  it('$nor keeps rows where the field is missing (MongoDB semantics; Parse on PostgreSQL drops them)', async () => {
    const where = { $nor: [{ status: 'new' }, { tenant: 'acme' }] };
    for (const reader of readers) {
      const all = await restRows(ORDER, reader);
      const expected = all.filter((r) => r.status !== 'new' && r.tenant !== 'acme').length;
      const [sql] = await query(countSql({ className: ORDER, where }, ctxFor(reader)));
      expect(sql.count).toBe(expected);
    }
  });

  it('counts pointer constraints as Parse does (pointer object and bare objectId)', async () => {
    const [any] = await restRows(ORDER, readers[5]);
    const ptr = any.customer as { objectId: string };
    for (const reader of readers) {
      const rest = await restRows(ORDER, reader, { customer: pointer(CUSTOMER, ptr.objectId) });
      const ctx = ctxFor(reader);
      const [a] = await query(
        countSql({ className: ORDER, where: { customer: pointer(CUSTOMER, ptr.objectId) } }, ctx),
      );
      const [b] = await query(
        countSql({ className: ORDER, where: { customer: { $in: [ptr.objectId] } } }, ctx),
      );
      expect([a.count, b.count]).toEqual([rest.length, rest.length]);
    }
  });

  it('treats equality with a scalar on an Array field as "contains", like $all of one', async () => {
    for (const reader of readers) {
      const [eq] = await query(
        countSql({ className: ORDER, where: { tags: 'a' } }, ctxFor(reader)),
      );
      const rest = await restRows(ORDER, reader, { tags: { $all: ['a'] } });
      expect(eq.count).toBe(rest.length);
    }
  });

  it('never lets a row the reader cannot read through REST into SQL results', async () => {
    for (const reader of readers) {
      const rest = new Set((await restRows(ORDER, reader)).map((r) => r.objectId));
      const rows = await query(
        selectSql({ className: ORDER, columns: ['objectId'], limit: 1000 }, ctxFor(reader)),
      );
      const sqlIds = rows.map((r) => r.objectId);
      expect(sqlIds.filter((id) => !rest.has(id))).toEqual([]);
      expect(sqlIds).toHaveLength(rest.size);
      if (reader.principals !== 'master') {
        expect(sqlIds.filter((id) => forbiddenIds.includes(id as string))).toEqual([]);
      }
    }
  });

  it('group_by status (count and sum) equals grouping the REST rows', async () => {
    for (const reader of readers) {
      const rest = await restRows(ORDER, reader);
      const expected = new Map<unknown, { n: number; sum: number }>();
      for (const r of rest) {
        const key = r.status ?? null;
        const e = expected.get(key) ?? { n: 0, sum: 0 };
        e.n += 1;
        e.sum += r.amount as number;
        expected.set(key, e);
      }
      const ctx = ctxFor(reader);
      const counts = await query(groupBySql({ className: ORDER, field: 'status' }, ctx));
      const sums = await query(
        groupBySql(
          { className: ORDER, field: 'status', accumulator: 'sum', valueField: 'amount' },
          ctx,
        ),
      );
      const asMap = (rows: Row[]) => Object.fromEntries(rows.map((r) => [String(r.key), r.value]));
      expect(asMap(counts)).toEqual(
        Object.fromEntries([...expected].map(([k, v]) => [String(k), v.n])),
      );
      expect(asMap(sums)).toEqual(
        Object.fromEntries([...expected].map(([k, v]) => [String(k), v.sum])),
      );
    }
  });

  it('group_by a pointer returns objectIds', async () => {
    const reader = readers[0];
    const rest = await restRows(ORDER, reader);
    const q = groupBySql({ className: ORDER, field: 'customer' }, ctxFor(reader));
    expect(q.key).toEqual({ field: 'customer', type: 'Pointer', targetClass: CUSTOMER });
    const rows = await query(q);
    const expected: Record<string, number> = {};
    for (const r of rest) {
      const id = (r.customer as { objectId: string }).objectId;
      expected[id] = (expected[id] ?? 0) + 1;
    }
    expect(Object.fromEntries(rows.map((r) => [r.key, r.value]))).toEqual(expected);
  });

  it('group_by_date buckets by month in the requested time zone', async () => {
    const fmt = new Intl.DateTimeFormat('en-CA', {
      timeZone: TZ,
      year: 'numeric',
      month: '2-digit',
    });
    for (const reader of readers) {
      const rest = await restRows(ORDER, reader);
      const expected: Record<string, number> = {};
      for (const r of rest) {
        const [y, m] = fmt.format(new Date((r.placedAt as { iso: string }).iso)).split('-');
        const key = `${y}-${m}-01T00:00:00`;
        expected[key] = (expected[key] ?? 0) + (r.amount as number);
      }
      const rows = await query(
        groupByDateSql(
          {
            className: ORDER,
            field: 'placedAt',
            interval: 'month',
            timeZone: TZ,
            accumulator: 'sum',
            valueField: 'amount',
          },
          ctxFor(reader),
        ),
      );
      expect(Object.fromEntries(rows.map((r) => [r.bucket, r.value]))).toEqual(expected);
    }
  });

  it('distinct values match the REST rows, arrays unwound', async () => {
    for (const reader of readers) {
      const rest = await restRows(ORDER, reader);
      const statuses = await query(
        distinctSql({ className: ORDER, field: 'status' }, ctxFor(reader)),
      );
      const tags = await query(distinctSql({ className: ORDER, field: 'tags' }, ctxFor(reader)));
      expect(statuses.map((r) => r.value)).toEqual(
        [...new Set(rest.map((r) => r.status).filter((s) => s !== undefined))].sort(),
      );
      expect(tags.map((r) => r.value)).toEqual(
        [...new Set(rest.flatMap((r) => r.tags as string[]))].sort(),
      );
    }
  });

  it('applies the scope where on top of the ACL (tenant scoping)', async () => {
    for (const reader of readers) {
      const rest = await restRows(ORDER, reader, { tenant: 'acme' });
      const ctx = ctxFor(reader, { [ORDER]: { tenant: 'acme' } });
      const [sql] = await query(countSql({ className: ORDER }, ctx));
      expect(sql.count).toBe(rest.length);
      const groups = await query(groupBySql({ className: ORDER, field: 'tenant' }, ctx));
      expect(groups.every((g) => g.key === 'acme')).toBe(true);
    }
  });

  it('never selects a protected column, and refuses to group or filter on it', async () => {
    const reader = readers[0];
    const ctx: SqlContext = {
      ...ctxFor(reader),
      columnsFor: (c) => Object.keys(schemas[c].fields).filter((f) => f !== 'secret'),
    };
    const rows = await query(selectSql({ className: ORDER, limit: 5 }, ctx));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row).not.toHaveProperty('secret');
    expect(() => groupBySql({ className: ORDER, field: 'secret' }, ctx)).toThrow(AccessDeniedError);
    expect(() => countSql({ className: ORDER, where: { secret: 's1' } }, ctx)).toThrow(
      /Unknown field/,
    );
    // A looked-up class is read with its own visible columns only.
    const hideTier: SqlContext = {
      ...ctx,
      columnsFor: (c) =>
        Object.keys(schemas[c].fields).filter((f) => f !== 'secret' && f !== 'tier'),
    };
    const joined = await query(
      compilePipeline(
        ORDER,
        [
          {
            $lookup: { from: CUSTOMER, localField: 'customer', foreignField: 'objectId', as: 'c' },
          },
          { $unwind: '$c' },
        ],
        hideTier,
      ),
    );
    expect(joined.length).toBeGreaterThan(0);
    for (const row of joined) {
      expect(row).not.toHaveProperty('secret');
      expect(row.c).toHaveProperty('name');
      expect(row.c).not.toHaveProperty('tier');
    }
  });

  it('aggregate pipeline: $match + $lookup + $unwind + $group equals the REST computation', async () => {
    for (const reader of readers) {
      const orders = await restRows(ORDER, reader, { amount: { $gt: 10 } });
      const customers = new Map(
        (await restRows(CUSTOMER, reader)).map((c) => [c.objectId as string, c]),
      );
      const expected: Record<string, { total: number; n: number }> = {};
      for (const o of orders) {
        const c = customers.get((o.customer as { objectId: string }).objectId);
        if (!c) continue; // a customer the reader cannot read joins nothing
        const e = (expected[c.tier as string] ??= { total: 0, n: 0 });
        e.total += o.amount as number;
        e.n += 1;
      }
      const q = compilePipeline(
        ORDER,
        [
          { $match: { amount: { $gt: 10 } } },
          {
            $lookup: {
              from: CUSTOMER,
              localField: 'customer',
              foreignField: 'objectId',
              as: 'cust',
            },
          },
          { $unwind: '$cust' },
          { $group: { _id: '$cust.tier', total: { $sum: '$amount' }, n: { $sum: 1 } } },
          { $sort: { _id: 1 } },
        ],
        ctxFor(reader),
      );
      const rows = await query(q);
      expect(Object.fromEntries(rows.map((r) => [r._id, { total: r.total, n: r.n }]))).toEqual(
        expected,
      );
    }
  });

  it('aggregate pipeline: $sort + $skip + $limit + $project keep Parse order; $count counts', async () => {
    for (const reader of readers) {
      const rest = await findRows(ORDER, {}, reader.auth, {
        limit: '1000',
        order: '-amount,objectId',
      });
      const rows = await query(
        compilePipeline(
          ORDER,
          [
            { $sort: { amount: -1, objectId: 1 } },
            { $skip: 2 },
            { $limit: 5 },
            { $project: { _id: 0, id: '$objectId', amount: 1 } },
          ],
          ctxFor(reader),
        ),
      );
      expect(rows).toEqual(rest.slice(2, 7).map((r) => ({ id: r.objectId, amount: r.amount })));
      const counted = await query(
        compilePipeline(ORDER, [{ $match: { tenant: 'acme' } }, { $count: 'n' }], ctxFor(reader)),
      );
      const acme = rest.filter((r) => r.tenant === 'acme').length;
      expect(counted).toEqual(acme ? [{ n: acme }] : []);
    }
  });

  it('binds hostile values: they match nothing and change nothing', async () => {
    const hostile = [
      '\'; DROP TABLE "_User"; --',
      '" OR 1=1 --',
      "\\'; SELECT pg_sleep(10); --",
      '$1',
      'ǅ\u0000x'.replace('\u0000', ''),
    ];
    const reader = readers[0];
    for (const value of hostile) {
      const [row] = await query(
        countSql(
          { className: ORDER, where: { status: value, 'meta.channel': value } },
          ctxFor(reader),
        ),
      );
      expect(row.count).toBe(0);
      const ctx = ctxFor({ ...reader, principals: [value] });
      const [pub] = await query(countSql({ className: ORDER }, ctx));
      expect(pub.count).toBe((await restRows(ORDER, readers[4])).length);
    }
    const [users] = await query({ text: 'SELECT count(*)::int AS n FROM "_User"', values: [] });
    expect(users.n).toBeGreaterThanOrEqual(4);
  });
});
