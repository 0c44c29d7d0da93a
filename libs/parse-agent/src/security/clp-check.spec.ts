import { clpGrants } from './clp-check';

describe('clpGrants', () => {
  const alice = { master: false as const, principals: ['*', 'u1', 'role:acme-staff'] };
  const anonymous = { master: false as const, principals: ['*'] };

  it('treats a missing entry as public and the master key as above CLP', () => {
    expect(clpGrants(undefined, 'update', anonymous)).toBe(true);
    expect(clpGrants({ update: {} }, 'update', { master: true })).toBe(true);
  });

  it('grants by everyone, signed-in users, user id and role', () => {
    expect(clpGrants({ update: { '*': true } }, 'update', anonymous)).toBe(true);
    expect(clpGrants({ update: { requiresAuthentication: true } }, 'update', alice)).toBe(true);
    expect(clpGrants({ update: { requiresAuthentication: true } }, 'update', anonymous)).toBe(
      false,
    );
    expect(clpGrants({ delete: { u1: true } }, 'delete', alice)).toBe(true);
    expect(clpGrants({ delete: { 'role:acme-staff': true } }, 'delete', alice)).toBe(true);
  });

  it('refuses an empty entry and roles the user does not hold', () => {
    expect(clpGrants({ update: {} }, 'update', alice)).toBe(false);
    expect(clpGrants({ delete: { 'role:admin': true } }, 'delete', alice)).toBe(false);
    expect(clpGrants({ delete: { '*': false } }, 'delete', alice)).toBe(false);
  });
});
