import { ParseRequestError } from '../core/errors';
import type { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import { ParseSessionVerifier, SessionCheckUnavailableError } from './session-verifier';

/**
 * The cache and failure rules with a scripted stand-in for Parse Server (the real one is exercised
 * in test/auth/shipped-auth.e2e.spec.ts): what is asked, what is remembered, for how long.
 */
class ScriptedParse {
  mode: 'valid' | 'invalid' | 'down' | 'error500' = 'valid';
  roles: string[] = ['acme-staff'];
  meCalls = 0;
  roleCalls = 0;

  request = (_method: string, path: string, _body: unknown, auth: { sessionToken?: string }) => {
    expect(path).toBe('/users/me');
    this.meCalls++;
    if (this.mode === 'invalid')
      return Promise.reject(new ParseRequestError('Parse error: Invalid session token', 209, 400));
    if (this.mode === 'down')
      return Promise.reject(new ParseRequestError('Parse error: Parse Server is unreachable.'));
    if (this.mode === 'error500')
      return Promise.reject(new ParseRequestError('Parse error: HTTP 500', undefined, 500));
    return Promise.resolve({ objectId: `id-${auth.sessionToken}`, username: 'alice' });
  };

  find = () => {
    this.roleCalls++;
    return Promise.resolve(this.roles.map((name) => ({ name })));
  };
}

describe('ParseSessionVerifier', () => {
  let parse: ScriptedParse;
  let clock: number;
  const verifier = (ttl = 10_000, maxEntries?: number) =>
    new ParseSessionVerifier(
      parse as unknown as ParseRestClient,
      { cacheTtlMs: ttl, maxEntries },
      { fromRole: '{tenant}-staff' },
      () => clock,
    );

  beforeEach(() => {
    parse = new ScriptedParse();
    clock = 1_000_000;
  });

  it('answers a valid token with its user and tenant, then from the cache until the TTL ends', async () => {
    const sessions = verifier();
    const expected = { userId: 'id-t1', username: 'alice', tenant: { tenantId: 'acme' } };
    expect(await sessions.verify('t1')).toEqual(expected);
    clock += 9_999;
    expect(await sessions.verify('t1')).toEqual(expected);
    expect(parse.meCalls).toBe(1);
    // Logged out meanwhile: Parse is asked again once the answer is 10 s old.
    parse.mode = 'invalid';
    clock += 1;
    expect(await sessions.verify('t1')).toBeNull();
    expect(parse.meCalls).toBe(2);
  });

  it('asks Parse afresh when told to, whatever the cache holds', async () => {
    const sessions = verifier();
    await sessions.verify('t1');
    parse.mode = 'invalid';
    expect(await sessions.verify('t1', { fresh: true })).toBeNull();
    // The fresh answer replaces the cached one.
    expect(await sessions.verify('t1')).toBeNull();
    expect(parse.meCalls).toBe(2);
  });

  it('remembers a rejected token too, so made-up tokens do not each cost a round trip', async () => {
    parse.mode = 'invalid';
    const sessions = verifier();
    expect(await sessions.verify('bad')).toBeNull();
    expect(await sessions.verify('bad')).toBeNull();
    expect(parse.meCalls).toBe(1);
  });

  it('answers Parse down or failing with SessionCheckUnavailableError and never caches it', async () => {
    const sessions = verifier();
    for (const mode of ['down', 'error500'] as const) {
      parse.mode = mode;
      await expect(sessions.verify('t1')).rejects.toBeInstanceOf(SessionCheckUnavailableError);
    }
    parse.mode = 'valid';
    expect((await sessions.verify('t1'))?.userId).toBe('id-t1');
    expect(parse.meCalls).toBe(3);
  });

  it('refuses to guess a tenant when the role read fails', async () => {
    const sessions = verifier();
    parse.find = () => Promise.reject(new Error('socket hang up'));
    await expect(sessions.verify('t1')).rejects.toThrow(/tenant check could not read/);
    parse.find = () => Promise.resolve([{ name: 'acme-staff' }]);
    expect((await sessions.verify('t1'))?.tenant).toEqual({ tenantId: 'acme' });
  });

  it('shares one check among concurrent requests with the same token', async () => {
    const sessions = verifier();
    const answers = await Promise.all([1, 2, 3].map(() => sessions.verify('t1')));
    expect(answers.every((a) => a?.userId === 'id-t1')).toBe(true);
    expect(parse.meCalls).toBe(1);
  });

  it('keeps at most maxEntries answers, dropping the oldest', async () => {
    const sessions = verifier(10_000, 2);
    await sessions.verify('t1');
    await sessions.verify('t2');
    await sessions.verify('t3');
    expect(parse.meCalls).toBe(3);
    await sessions.verify('t3');
    await sessions.verify('t2');
    expect(parse.meCalls).toBe(3);
    await sessions.verify('t1');
    expect(parse.meCalls).toBe(4);
  });

  it('never keys the cache by the token itself', async () => {
    const sessions = verifier();
    await sessions.verify('r:secret-token');
    const keys = [...(sessions as unknown as { cache: Map<string, unknown> }).cache.keys()];
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain('secret-token');
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
  });

  it('says a user has no tenant when no tenant source is configured', async () => {
    const sessions = new ParseSessionVerifier(parse as unknown as ParseRestClient);
    const session = await sessions.verify('t1');
    expect(session?.tenant).toEqual({ reason: expect.stringMatching(/set auth\.tenant/) });
    expect(parse.roleCalls).toBe(0);
  });
});
