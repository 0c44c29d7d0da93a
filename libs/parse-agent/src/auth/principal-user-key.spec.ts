import { setPrincipal } from './parse-agent-principal';
import { principalUserKey } from './principal-user-key';

describe('principalUserKey', () => {
  const request = {};
  setPrincipal(request, {
    kind: 'user',
    userId: 'u1',
    username: 'alice',
    sessionToken: 'r:alice',
    tenantId: 'acme',
  });

  it("is the guard's user id when the agent acts with the principal's own token", () => {
    expect(principalUserKey(request, { sessionToken: 'r:alice' })).toBe('parse-user:u1');
  });

  it('is undefined otherwise, so the default per-agent key applies', () => {
    expect(principalUserKey(request, { sessionToken: 'r:someone-else' })).toBeUndefined();
    expect(principalUserKey(request, {})).toBeUndefined();
    expect(principalUserKey({}, { sessionToken: 'r:alice' })).toBeUndefined();
    const operator = {};
    setPrincipal(operator, { kind: 'operator' });
    expect(principalUserKey(operator, {})).toBeUndefined();
  });
});
