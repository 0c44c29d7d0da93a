import {
  createObject,
  createRole,
  createUser,
  defineClass,
  resetData,
  type SeededUser,
} from './harness/fixtures';
import { findRows, parseRest, ParseRestError } from './harness/parse-rest';

/**
 * Proves the test bed is a real Parse Server enforcing ACL, CLP and protectedFields on PostgreSQL:
 * everything the library's session-token path relies on.
 */
describe('test bed: real Parse Server on PostgreSQL', () => {
  let alice: SeededUser;
  let bob: SeededUser;
  let carol: SeededUser;

  beforeAll(async () => {
    await resetData();
    alice = await createUser('tb_alice');
    bob = await createUser('tb_bob');
    carol = await createUser('tb_carol');
  });

  it('answers health', async () => {
    const res = await parseRest<{ status: string }>('GET', '/health');
    expect(res.status).toBe('ok');
  });

  it('finds a row whose ACL allows only alice with her session token, not with bob’s', async () => {
    const id = await createObject(
      'TbNote',
      { title: 'alice only' },
      {
        [alice.objectId]: { read: true, write: true },
      },
    );
    await createObject('TbNote', { title: 'public' });

    const asAlice = await findRows('TbNote', {}, { sessionToken: alice.sessionToken });
    const asBob = await findRows('TbNote', {}, { sessionToken: bob.sessionToken });
    const anonymous = await findRows('TbNote', {});

    expect(asAlice.map((r) => r.objectId)).toContain(id);
    expect(asBob.map((r) => r.objectId)).not.toContain(id);
    expect(asBob.map((r) => r.title)).toEqual(['public']);
    expect(anonymous.map((r) => r.objectId)).not.toContain(id);
  });

  it('grants a role-protected row to members of a child role through inheritance', async () => {
    await createRole('tb_staff', { users: [bob.objectId] });
    await createRole('tb_admin', { users: [carol.objectId], inheritedBy: ['tb_staff'] });
    // Only tb_admin may read; tb_staff inherits tb_admin's permissions, so bob reads too.
    const id = await createObject(
      'TbAudit',
      { entry: 'admin only' },
      { 'role:tb_admin': { read: true } },
    );

    const asCarol = await findRows('TbAudit', {}, { sessionToken: carol.sessionToken });
    const asBob = await findRows('TbAudit', {}, { sessionToken: bob.sessionToken });
    const asAlice = await findRows('TbAudit', {}, { sessionToken: alice.sessionToken });

    expect(asCarol.map((r) => r.objectId)).toEqual([id]);
    expect(asBob.map((r) => r.objectId)).toEqual([id]);
    expect(asAlice).toEqual([]);
  });

  it('refuses an anonymous query when the CLP requires authentication', async () => {
    await defineClass(
      'TbPrivate',
      { secret: { type: 'String' } },
      {
        find: { requiresAuthentication: true },
        get: { requiresAuthentication: true },
        count: { requiresAuthentication: true },
        create: {},
        update: {},
        delete: {},
        addField: {},
      },
    );
    await createObject('TbPrivate', { secret: 'visible to signed-in users' });

    // Parse answers OBJECT_NOT_FOUND (101) with a permission message rather than revealing the class.
    const refusal = await findRows('TbPrivate', {}).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ParseRestError);
    expect(refusal).toMatchObject({ code: 101 });
    expect((refusal as Error).message).toMatch(/Permission denied/);
    const signedIn = await findRows('TbPrivate', {}, { sessionToken: alice.sessionToken });
    expect(signedIn).toHaveLength(1);
  });

  it('hides a protectedFields column from a non-owner and shows it to the master key', async () => {
    await defineClass(
      'TbProfile',
      {
        owner: { type: 'Pointer', targetClass: '_User' },
        phone: { type: 'String' },
        city: { type: 'String' },
      },
      {
        find: { '*': true },
        get: { '*': true },
        count: { '*': true },
        create: {},
        update: {},
        delete: {},
        addField: {},
        protectedFields: { '*': ['phone'], [`userField:owner`]: [] },
      },
    );
    await createObject('TbProfile', {
      owner: { __type: 'Pointer', className: '_User', objectId: alice.objectId },
      phone: '+1-555-0100',
      city: 'Lisbon',
    });

    const [asBob] = await findRows('TbProfile', {}, { sessionToken: bob.sessionToken });
    const [asAlice] = await findRows('TbProfile', {}, { sessionToken: alice.sessionToken });
    const [asMaster] = await findRows('TbProfile', {}, { masterKey: true });

    expect(asBob.city).toBe('Lisbon');
    expect(asBob).not.toHaveProperty('phone');
    expect(asAlice.phone).toBe('+1-555-0100');
    expect(asMaster.phone).toBe('+1-555-0100');
  });

  it('counts exactly, even where PostgreSQL would answer with an estimate', async () => {
    const res = await parseRest<{ count: number }>(
      'GET',
      `/classes/TbNote?count=1&limit=0&where=${encodeURIComponent(JSON.stringify({ objectId: { $exists: true } }))}`,
      undefined,
      { masterKey: true },
    );
    expect(res.count).toBe(2);
  });
});
