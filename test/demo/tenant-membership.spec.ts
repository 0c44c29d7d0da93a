import { AgentUnauthorizedError, tenantOfUser as libraryTenantOfUser } from 'nestjs-parse-agent';
import { ParseSessionVerifier } from 'nestjs-parse-agent/auth';
import { ParseRestClient } from 'nestjs-parse-agent/data/parse-rest/parse-rest-client';
import { agentOptionsFor, DEMO_TENANT_SOURCE } from '../../src/example/auth/agent-factory';
import { seedDemo } from '../harness/demo-data';
import { createUser, pointer } from '../harness/fixtures';
import { findRows, parseRest, testParseConnection } from '../harness/parse-rest';

/** The demo's tenant binding (the library's role source) on the real Parse Server. */
describe('the demo tenant source: direct membership in "<slug>-staff"', () => {
  let parse: ParseRestClient;
  const tenantOfUser = (client: ParseRestClient, userId: string) =>
    libraryTenantOfUser(client, userId, DEMO_TENANT_SOURCE);
  const ids: Record<string, string> = {};

  const addToRole = async (role: string, userId: string) => {
    const [row] = await findRows('_Role', { name: role }, { masterKey: true });
    await parseRest(
      'PUT',
      `/roles/${String(row.objectId)}`,
      { users: { __op: 'AddRelation', objects: [pointer('_User', userId)] } },
      { masterKey: true },
    );
  };

  beforeAll(async () => {
    await seedDemo();
    parse = new ParseRestClient(testParseConnection());
    for (const u of await findRows('_User', {}, { masterKey: true })) {
      ids[String(u.username)] = String(u.objectId);
    }
    ids.dana = (await createUser('dana', 'pw', { tenantId: 'acme' })).objectId;
    ids.eve = (await createUser('eve', 'pw')).objectId;
    await addToRole('acme-staff', ids.eve);
    await addToRole('globex-staff', ids.eve);
    ids.frank = (await createUser('frank', 'pw')).objectId;
    // `staff` is held by every tenant's staff: it names no tenant.
    await addToRole('staff', ids.frank);
  });
  afterAll(() => parse.close());

  it('binds the seeded staff to their tenant role, carol to acme despite inheriting globex', async () => {
    expect(await tenantOfUser(parse, ids.alice)).toEqual({ tenantId: 'acme' });
    expect(await tenantOfUser(parse, ids.bob)).toEqual({ tenantId: 'globex' });
    expect(await tenantOfUser(parse, ids.carol)).toEqual({ tenantId: 'acme' });
  });

  it('gives no tenant to a user in no tenant role, whatever their own row says', async () => {
    for (const name of ['dana', 'frank']) {
      const binding = await tenantOfUser(parse, ids[name]);
      expect(binding.tenantId).toBeUndefined();
      expect(binding).toMatchObject({ reason: expect.stringContaining('no tenant role') });
    }
  });

  it('refuses a user directly in two tenant roles, naming both', async () => {
    const binding = await tenantOfUser(parse, ids.eve);
    expect(binding.tenantId).toBeUndefined();
    expect(binding).toMatchObject({
      reason: expect.stringMatching(/several tenant roles \(acme-staff, globex-staff\)/),
    });
  });

  it('makes the demo agentFactory refuse such users rather than build an unscoped agent', async () => {
    const verifier = new ParseSessionVerifier(parse, {}, DEMO_TENANT_SOURCE);
    const token = (
      await parseRest<{ sessionToken: string }>('POST', '/login', {
        username: 'eve',
        password: 'pw',
      })
    ).sessionToken;
    const user = await verifier.verify(token);
    expect(user?.tenant.tenantId).toBeUndefined();
    const request = {
      parseAgentPrincipal: {
        kind: 'user' as const,
        sessionToken: token,
        userId: ids.eve,
        username: 'eve',
        noTenantReason: user && 'reason' in user.tenant ? user.tenant.reason : undefined,
      },
    };
    expect(() => agentOptionsFor(request)).toThrow(AgentUnauthorizedError);
    expect(() => agentOptionsFor(request)).toThrow(
      /No tenant for user eve: .*several tenant roles/,
    );
  });
});
