import type { AgentIdentity } from '../../core/agent-identity';
import { AgentUnauthorizedError, ParseRequestError } from '../../core/errors';
import { UserKeys, UserUnresolvedError } from './user-key';

const identity = (fields: Partial<AgentIdentity>): AgentIdentity => ({
  agentId: 'a',
  permissions: 'readonly',
  authType: fields.sessionToken
    ? 'session_token'
    : fields.aclUser
      ? 'acl_user'
      : fields.aclRole
        ? 'acl_role'
        : 'master_key',
  usingMasterKey: !fields.sessionToken && !fields.aclUser && !fields.aclRole,
  ...fields,
});

describe('UserKeys', () => {
  const users: Record<string, string> = { 'r:a1': 'alice', 'r:a2': 'alice', 'r:b1': 'bob' };

  it("gives every token of one Parse user the same key, another user's a different one", async () => {
    const asked: string[] = [];
    const keys = new UserKeys(async (token) => {
      asked.push(token);
      const id = users[token];
      if (!id) throw new ParseRequestError('Parse error: Invalid session token', 209, 400);
      return id;
    });
    const a1 = await keys.of(identity({ sessionToken: 'r:a1' }));
    const a2 = await keys.of(identity({ sessionToken: 'r:a2', tenantId: 't2' }));
    const b1 = await keys.of(identity({ sessionToken: 'r:b1' }));
    expect(a1).toBe(a2);
    expect(a1).not.toBe(b1);
    expect(a1).not.toContain('alice'); // opaque
    // The aclUser of the same id acts for the same person.
    expect(await keys.of(identity({ aclUser: 'alice' }))).toBe(a1);
    expect(await keys.of(identity({ aclRole: 'alice' }))).not.toBe(a1);
    expect(await keys.of(identity({}))).toBe(await keys.of(identity({ tenantId: 'x' })));
    // Resolved once per token.
    await keys.of(identity({ sessionToken: 'r:a1' }));
    expect(asked).toEqual(['r:a1', 'r:a2', 'r:b1']);
  });

  it('refuses a token Parse rejects and does not remember the failure', async () => {
    let calls = 0;
    const keys = new UserKeys(async () => {
      calls++;
      throw new ParseRequestError('Parse error: Invalid session token', 209, 400);
    });
    await expect(keys.of(identity({ sessionToken: 'r:forged' }))).rejects.toBeInstanceOf(
      AgentUnauthorizedError,
    );
    await expect(keys.of(identity({ sessionToken: 'r:forged' }))).rejects.toBeInstanceOf(
      AgentUnauthorizedError,
    );
    expect(calls).toBe(2);
  });

  it('answers "unavailable" (not unauthorized) when Parse cannot be asked, and retries later', async () => {
    let up = false;
    const keys = new UserKeys(async () => {
      if (!up)
        throw new ParseRequestError('Parse error: Parse Server is unreachable (ECONNREFUSED).');
      return 'alice';
    });
    await expect(keys.of(identity({ sessionToken: 'r:a1' }))).rejects.toBeInstanceOf(
      UserUnresolvedError,
    );
    up = true;
    await expect(keys.of(identity({ sessionToken: 'r:a1' }))).resolves.toEqual(expect.any(String));
  });

  it('forgets a cached token after its time to live and stays bounded', async () => {
    let now = 0;
    let calls = 0;
    const keys = new UserKeys(
      async (token) => {
        calls++;
        return token;
      },
      1000,
      10,
      () => now,
    );
    await keys.of(identity({ sessionToken: 'r:x' }));
    now = 1500;
    await keys.of(identity({ sessionToken: 'r:x' }));
    expect(calls).toBe(2);
    for (let i = 0; i < 50; i++) await keys.of(identity({ sessionToken: `r:${i}` }));
    expect((keys as unknown as { cache: Map<string, unknown> }).cache.size).toBeLessThanOrEqual(10);
  });
});
