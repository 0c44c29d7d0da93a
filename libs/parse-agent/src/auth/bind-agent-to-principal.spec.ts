import { UNUSABLE_IDENTITIES } from '../../../../test/fixtures/blank-identities';
import { AgentUnauthorizedError } from '../core/errors';
import { agentOptionsForPrincipal, bindAgentToPrincipal } from './bind-agent-to-principal';
import { setPrincipal, type ParseAgentUserPrincipal } from './parse-agent-principal';

const alice: ParseAgentUserPrincipal = {
  kind: 'user',
  userId: 'u1',
  username: 'alice',
  sessionToken: 'r:alice',
  tenantId: 'acme',
};
const dana: ParseAgentUserPrincipal = {
  kind: 'user',
  userId: 'u2',
  username: 'dana',
  sessionToken: 'r:dana',
  noTenantReason: 'The user is a member of no tenant role.',
};

const refusal = (work: () => unknown): AgentUnauthorizedError => {
  try {
    work();
  } catch (error) {
    if (error instanceof AgentUnauthorizedError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('bindAgentToPrincipal', () => {
  it("binds a user's agent to their session and their tenant, readonly by default", () => {
    const request = {};
    setPrincipal(request, alice);
    expect(bindAgentToPrincipal()(request)).toEqual({
      permissions: 'readonly',
      sessionToken: 'r:alice',
      tenantId: 'acme',
    });
  });

  it('refuses a user without a tenant, with the reason, rather than build an unscoped agent', () => {
    const error = refusal(() => agentOptionsForPrincipal(dana));
    expect(error.reason).toBe('no_tenant');
    expect(error.message).toBe('No tenant for user dana: The user is a member of no tenant role.');
  });

  it('lets an app without tenants opt out of the tenant requirement explicitly', () => {
    expect(agentOptionsForPrincipal(dana, { requireTenant: false })).toEqual({
      permissions: 'readonly',
      sessionToken: 'r:dana',
    });
  });

  it('refuses a user whose session token is empty, blank or missing: never options without one', () => {
    // Such options would build a master-key agent behind the user's request.
    for (const sessionToken of [...UNUSABLE_IDENTITIES, undefined]) {
      const user = { ...alice, sessionToken } as unknown as ParseAgentUserPrincipal;
      const error = refusal(() => agentOptionsForPrincipal(user));
      expect(error.reason).toBe('blank_identity');
      expect(error.message).toMatch(/^sessionToken is /);
      const request = {};
      setPrincipal(request, user);
      expect(refusal(() => bindAgentToPrincipal({ requireTenant: false })(request)).reason).toBe(
        'blank_identity',
      );
    }
  });

  it('refuses a user whose tenant is present but blank, even where tenants are optional', () => {
    for (const tenantId of UNUSABLE_IDENTITIES) {
      const user = { ...alice, tenantId } as unknown as ParseAgentUserPrincipal;
      for (const requireTenant of [true, false]) {
        const error = refusal(() => agentOptionsForPrincipal(user, { requireTenant }));
        expect(error.reason).toBe('blank_identity');
        expect(error.message).toMatch(/^tenantId is /);
      }
    }
  });

  it('gives the operator a master-key agent, readonly unless configured', () => {
    expect(agentOptionsForPrincipal({ kind: 'operator' })).toEqual({ permissions: 'readonly' });
    expect(
      agentOptionsForPrincipal({ kind: 'operator' }, { operatorPermissions: 'write' }),
    ).toEqual({ permissions: 'write' });
  });

  it('refuses a request no shipped guard authenticated', () => {
    expect(refusal(() => bindAgentToPrincipal()({})).reason).toBe('no_principal');
    expect(refusal(() => bindAgentToPrincipal()(undefined)).reason).toBe('no_principal');
    // A client cannot put a principal on the request through a body or a header.
    const forged = { body: { parseAgentPrincipal: { kind: 'operator' } }, headers: {} };
    expect(refusal(() => bindAgentToPrincipal()(forged)).reason).toBe('no_principal');
  });

  it('chooses the tier per user and adds options, never changing identity or tenant', () => {
    const options = agentOptionsForPrincipal(alice, {
      userPermissions: (user) => (user.username === 'alice' ? 'write' : 'readonly'),
      extend: () =>
        ({
          tools: ['query_class'],
          tenantId: 'globex',
          sessionToken: 'r:other',
          aclRole: 'admin',
        }) as never,
    });
    expect(options).toEqual({
      tools: ['query_class'],
      permissions: 'write',
      sessionToken: 'r:alice',
      tenantId: 'acme',
    });
    const operator = agentOptionsForPrincipal(
      { kind: 'operator' },
      { extend: () => ({ aclUser: 'u1', permissions: 'admin' }) as never },
    );
    expect(operator).toEqual({ permissions: 'readonly' });
  });
});
