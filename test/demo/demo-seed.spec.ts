import { ParseAdminClient } from '../../src/demo/seed/parse-admin-client';
import { DEMO_CLASSES, ORDERS_PER_TENANT, seedDemoData } from '../../src/demo/seed/demo-seeder';
import { resetData } from '../harness/fixtures';
import { findRows, parseRest, testParseConfig } from '../harness/parse-rest';

describe('demo dataset seeding (real Parse Server)', () => {
  let admin: ParseAdminClient;

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
  });

  it('seeds once and keeps the same rows on a second run', async () => {
    const first = await seedDemoData(admin, 'demo-password');
    expect(first.seeded).toBe(true);
    expect(first.counts.Order).toBe(ORDERS_PER_TENANT * 2);
    expect(first.counts.Tenant).toBe(2);
    expect(first.counts._User).toBe(3);

    const second = await seedDemoData(admin, 'demo-password');
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
});
