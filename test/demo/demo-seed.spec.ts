import { ParseAdminClient } from '../../src/embedded/seed/parse-admin-client';
import { DEMO_CLASSES, ORDERS_PER_TENANT } from '../../src/embedded/seed/demo-dataset';
import { seedDemoData } from '../../src/embedded/seed/demo-seeder';
import { PostgresRowWriter, toStorageRow } from '../../src/embedded/seed/postgres-row-writer';
import { resetData } from '../harness/fixtures';
import { findRows, parseRest, testParseConfig } from '../harness/parse-rest';

// Both ways the rows can go: through Parse's /batch endpoint, and in bulk straight into Parse's
// PostgreSQL tables (what the embedded demo does). Parse must read the bulk rows back as its own.
describe.each([
  ['through Parse /batch', false],
  ['in bulk into PostgreSQL', true],
])('demo dataset seeding %s (real Parse Server)', (_way, bulk) => {
  let admin: ParseAdminClient;
  let rows: PostgresRowWriter | undefined;

  beforeAll(async () => {
    await resetData();
    await parseRest(
      'PUT',
      '/config',
      { params: { parseAgentDemoSeedVersion: null } },
      { masterKey: true },
    );
    const cfg = testParseConfig();
    admin = new ParseAdminClient(cfg.serverURL, cfg.appId, cfg.masterKey);
    rows = bulk ? new PostgresRowWriter(cfg.databaseURI) : undefined;
  });
  afterAll(async () => {
    await rows?.close();
  });

  it('seeds once and keeps the same rows on a second run', async () => {
    const first = await seedDemoData(admin, 'demo-password', { rows });
    expect(first.seeded).toBe(true);
    expect(first.counts.Order).toBe(ORDERS_PER_TENANT * 2);
    expect(first.counts.Tenant).toBe(2);
    expect(first.counts._User).toBe(3);

    const second = await seedDemoData(admin, 'demo-password', { rows });
    expect(second.seeded).toBe(false);
    expect(second.counts).toEqual(first.counts);
    for (const className of DEMO_CLASSES) expect(second.counts[className]).toBeGreaterThan(0);
  });

  it('lets alice log in, and scopes her reads by ACL and protectedFields', async () => {
    const login = await parseRest<{ sessionToken: string }>('POST', '/login', {
      username: 'alice',
      password: 'demo-password',
    });
    const bob = await parseRest<{ sessionToken: string }>('POST', '/login', {
      username: 'bob',
      password: 'demo-password',
    });
    const carol = await parseRest<{ sessionToken: string }>('POST', '/login', {
      username: 'carol',
      password: 'demo-password',
    });
    const asAlice = await findRows(
      'SupportTicket',
      {},
      { sessionToken: login.sessionToken },
      { limit: '100' },
    );
    const asBob = await findRows(
      'SupportTicket',
      {},
      { sessionToken: bob.sessionToken },
      { limit: '100' },
    );
    const asCarol = await findRows(
      'SupportTicket',
      {},
      { sessionToken: carol.sessionToken },
      { limit: '100' },
    );

    // alice: acme staff tickets plus her private ones; never globex, never admin-only.
    expect(asAlice.length).toBeGreaterThan(0);
    expect(asAlice.every((t) => t.tenantId === 'acme')).toBe(true);
    // bob: only globex tickets readable by globex staff.
    expect(asBob.every((t) => t.tenantId === 'globex')).toBe(true);
    // carol (admin, inheriting both staff roles) sees both tenants, but not alice's private tickets.
    expect(new Set(asCarol.map((t) => t.tenantId))).toEqual(new Set(['acme', 'globex']));
    const alicePrivate = asAlice.filter((t) => !asCarol.some((c) => c.objectId === t.objectId));
    expect(alicePrivate.length).toBeGreaterThan(0);

    const [customerForAlice] = await findRows('Customer', {}, { sessionToken: login.sessionToken });
    expect(customerForAlice).not.toHaveProperty('phone');
    const [customerForCarol] = await findRows('Customer', {}, { sessionToken: carol.sessionToken });
    expect(customerForCarol).toHaveProperty('phone');
  });

  it('keeps the secrets class away from every session', async () => {
    const login = await parseRest<{ sessionToken: string }>('POST', '/login', {
      username: 'carol',
      password: 'demo-password',
    });
    await expect(
      findRows('ApiCredential', {}, { sessionToken: login.sessionToken }),
    ).rejects.toThrow();
    expect(await findRows('ApiCredential', {}, { masterKey: true })).toHaveLength(4);
  });

  it('marks soft-deleted rows', async () => {
    expect(await admin.count('Order', { isDeleted: true })).toBe(60);
  });

  it('stores pointers, dates and ACLs the way Parse reads, queries, includes and writes them', async () => {
    const [order] = await findRows(
      'Order',
      { orderNumber: 'ACME-10003' },
      { masterKey: true },
      { include: 'customer' },
    );
    expect(order).toMatchObject({
      tenantId: 'acme',
      placedAt: { __type: 'Date', iso: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      product: { __type: 'Pointer', className: 'Product', objectId: expect.any(String) },
      customer: { __type: 'Object', className: 'Customer', tenantId: 'acme' },
      ACL: {
        'role:acme-staff': { read: true, write: true },
        'role:admin': { read: true, write: true },
      },
    });
    expect(Object.keys(order.ACL as object)).toHaveLength(2);
    expect(order.objectId).toMatch(/^[A-Za-z0-9]{10}$/);
    expect(Date.parse(order.createdAt as string)).not.toBeNaN();
    expect(Date.parse(order.updatedAt as string)).not.toBeNaN();
    // Queries on a pointer and on a date range find rows.
    const customer = order.customer as { objectId: string };
    const byCustomer = await findRows(
      'Order',
      { customer: { __type: 'Pointer', className: 'Customer', objectId: customer.objectId } },
      { masterKey: true },
    );
    expect(byCustomer.map((o) => o.objectId)).toContain(order.objectId);
    const late = await findRows(
      'Order',
      { placedAt: { $gte: { __type: 'Date', iso: '2026-06-01T00:00:00.000Z' } } },
      { masterKey: true },
      { limit: '5' },
    );
    expect(late.length).toBeGreaterThan(0);
    // The row's write ACL holds: acme staff may change this order, globex staff may not.
    const alice = await parseRest<{ sessionToken: string }>('POST', '/login', {
      username: 'alice',
      password: 'demo-password',
    });
    const bob = await parseRest<{ sessionToken: string }>('POST', '/login', {
      username: 'bob',
      password: 'demo-password',
    });
    await parseRest(
      'PUT',
      `/classes/Order/${order.objectId as string}`,
      { status: 'shipped' },
      { sessionToken: alice.sessionToken },
    );
    await expect(
      parseRest(
        'PUT',
        `/classes/Order/${order.objectId as string}`,
        { status: 'refunded' },
        { sessionToken: bob.sessionToken },
      ),
    ).rejects.toThrow();
    const [after] = await findRows('Order', { objectId: order.objectId }, { masterKey: true });
    expect(after.status).toBe('shipped');
    // An empty ACL (master key only) reads back as an empty ACL, not as public.
    const [credential] = await findRows('ApiCredential', {}, { masterKey: true });
    expect(credential.ACL).toEqual({});
  });
});

describe('toStorageRow (the row shape of the bulk seed)', () => {
  it('turns ACL, Pointer and Date into the adapter columns and sets the timestamps', () => {
    const row = toStorageRow(
      {
        name: 'x',
        qty: 2,
        ok: false,
        at: { __type: 'Date', iso: '2026-01-02T03:04:05.000Z' },
        customer: { __type: 'Pointer', className: 'Customer', objectId: 'abc' },
        ACL: { 'role:a': { read: true, write: true }, u1: { read: true } },
      },
      'id12345678',
      '2026-11-24T00:00:00.000Z',
    );
    expect(row).toEqual({
      objectId: 'id12345678',
      createdAt: '2026-11-24T00:00:00.000Z',
      updatedAt: '2026-11-24T00:00:00.000Z',
      name: 'x',
      qty: 2,
      ok: false,
      at: '2026-01-02T03:04:05.000Z',
      customer: 'abc',
      _rperm: ['role:a', 'u1'],
      _wperm: ['role:a'],
    });
    expect(row).not.toHaveProperty('ACL');
  });

  it('refuses a value type it cannot store as Parse would', () => {
    expect(() =>
      toStorageRow({ tags: { __op: 'AddUnique', objects: ['a'] } }, 'id12345678', 'now'),
    ).toThrow(/cannot store tags/);
  });
});
