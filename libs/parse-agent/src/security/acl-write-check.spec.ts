import {
  aclGrantsWrite,
  clpWriteDecision,
  pointerFieldsName,
  principalUserId,
} from './acl-write-check';

describe('clpWriteDecision (Parse’s class-level rule for writes)', () => {
  const role = ['*', 'role:writer', 'role:lead'];
  const user = ['*', 'u1', 'role:writer'];

  it('allows what no entry restricts, and what `*`, a role or the user is granted', () => {
    expect(clpWriteDecision(undefined, 'create', role)).toEqual({ allowed: true });
    expect(clpWriteDecision({ find: {} }, 'update', role)).toEqual({ allowed: true });
    expect(clpWriteDecision({ update: { '*': true } }, 'update', ['*'])).toEqual({ allowed: true });
    expect(clpWriteDecision({ update: { 'role:lead': true } }, 'update', role)).toEqual({
      allowed: true,
    });
    expect(clpWriteDecision({ delete: { u1: true } }, 'delete', user)).toEqual({ allowed: true });
  });

  it('lets requiresAuthentication through for anyone more than `*`, never for `*` alone', () => {
    const clp = { create: { requiresAuthentication: true } };
    expect(clpWriteDecision(clp, 'create', role).allowed).toBe(true);
    expect(clpWriteDecision(clp, 'create', ['*']).allowed).toBe(false);
  });

  it('refuses an empty entry, a false grant, and roles the agent does not hold', () => {
    expect(clpWriteDecision({ update: {} }, 'update', role).allowed).toBe(false);
    expect(clpWriteDecision({ update: { '*': false } }, 'update', role).allowed).toBe(false);
    expect(clpWriteDecision({ delete: { 'role:admin': true } }, 'delete', role).allowed).toBe(
      false,
    );
    // `*` among the agent's principals grants nothing unless `*` itself is granted.
    expect(clpWriteDecision({ update: { '*': 'yes' } }, 'update', ['*']).allowed).toBe(false);
    expect(clpWriteDecision({ update: 'open' } as never, 'update', role).allowed).toBe(false);
  });

  it('turns pointer permissions into a per-row check for update and delete, and never grants create', () => {
    const clp = {
      update: { pointerFields: ['owner'] },
      delete: {},
      create: { pointerFields: ['owner'] },
      writeUserFields: ['editors', 'owner'],
    };
    expect(clpWriteDecision(clp, 'update', user)).toEqual({
      allowed: true,
      pointerFields: ['owner', 'editors'],
    });
    expect(clpWriteDecision(clp, 'delete', user)).toEqual({
      allowed: true,
      pointerFields: ['editors', 'owner'],
    });
    const create = clpWriteDecision(clp, 'create', user);
    expect(create.allowed).toBe(false);
    expect(!create.allowed && create.reason).toContain('never allow creating');
  });

  it('refuses pointer permissions to principals that name no single user (an aclRole)', () => {
    const decision = clpWriteDecision({ update: { pointerFields: ['owner'] } }, 'update', role);
    expect(decision.allowed).toBe(false);
    expect(!decision.allowed && decision.reason).toContain('acts for no user');
  });
});

describe('principalUserId', () => {
  it('finds the one user id, and none for roles only or several users', () => {
    expect(principalUserId(['*', 'u1', 'role:a'])).toBe('u1');
    expect(principalUserId(['*', 'role:a'])).toBeUndefined();
    expect(principalUserId(['*', 'u1', 'u2'])).toBeUndefined();
  });
});

describe('pointerFieldsName', () => {
  const ptr = (objectId: string) => ({ __type: 'Pointer', className: '_User', objectId });

  it('matches a pointer, a pointer in an array, or a bare objectId', () => {
    expect(pointerFieldsName({ owner: ptr('u1') }, ['owner'], 'u1')).toBe(true);
    expect(pointerFieldsName({ editors: [ptr('u2'), ptr('u1')] }, ['owner', 'editors'], 'u1')).toBe(
      true,
    );
    expect(pointerFieldsName({ owner: 'u1' }, ['owner'], 'u1')).toBe(true);
  });

  it('does not match another user, a missing field, or a field not listed', () => {
    expect(pointerFieldsName({ owner: ptr('u2') }, ['owner'], 'u1')).toBe(false);
    expect(pointerFieldsName({}, ['owner'], 'u1')).toBe(false);
    expect(pointerFieldsName({ other: ptr('u1') }, ['owner'], 'u1')).toBe(false);
  });
});

describe('aclGrantsWrite (Parse’s row ACL rule for writes)', () => {
  const role = ['*', 'role:writer'];

  it('treats a row without an ACL as writable by everyone', () => {
    expect(aclGrantsWrite(undefined, role)).toBe(true);
    expect(aclGrantsWrite(null, ['*'])).toBe(true);
  });

  it('needs write: true for one of the principals; read access is not enough', () => {
    expect(aclGrantsWrite({ 'role:writer': { read: true, write: true } }, role)).toBe(true);
    expect(aclGrantsWrite({ '*': { write: true } }, role)).toBe(true);
    expect(aclGrantsWrite({ '*': { read: true } }, role)).toBe(false);
    expect(aclGrantsWrite({ 'role:writer': { read: true } }, role)).toBe(false);
    expect(aclGrantsWrite({ 'role:admin': { write: true } }, role)).toBe(false);
    expect(aclGrantsWrite({}, role)).toBe(false);
  });

  it('grants nothing for a malformed ACL', () => {
    expect(aclGrantsWrite('public', role)).toBe(false);
    expect(aclGrantsWrite({ 'role:writer': true }, role)).toBe(false);
    expect(aclGrantsWrite({ 'role:writer': { write: 'true' } }, role)).toBe(false);
  });
});
