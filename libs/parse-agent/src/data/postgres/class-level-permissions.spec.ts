import { AccessDeniedError } from '../../core/errors';
import {
  checkClassPermission,
  clpOperationFor,
  mergeProtectedFields,
  protectedFieldsFor,
  type PgReader,
} from './class-level-permissions';
import type { PgClassSchema } from './pg-schema';

const schema: PgClassSchema = {
  className: 'Doc',
  fields: {
    owner: { type: 'Pointer', targetClass: '_User' },
    editors: { type: 'Array' },
    title: { type: 'String' },
  },
};
const alice: PgReader = { master: false, userId: 'u1', roles: ['role:staff'] };
const anonymous: PgReader = { master: false, roles: [] };
const roleScope: PgReader = { master: false, roles: ['role:staff'] };
const master: PgReader = { master: true, roles: [] };

describe('checkClassPermission (Parse Server order: operation entry, requiresAuthentication, pointer permissions)', () => {
  it('allows everything without a CLP, or with a public entry', () => {
    expect(checkClassPermission('Doc', undefined, schema, anonymous, 'find')).toEqual({
      rows: 'all',
    });
    expect(checkClassPermission('Doc', { find: { '*': true } }, schema, anonymous, 'find')).toEqual(
      {
        rows: 'all',
      },
    );
  });

  it('allows the named user or role and refuses everyone else with clp_denied', () => {
    const clp = { find: { 'role:staff': true }, count: { u9: true } };
    expect(checkClassPermission('Doc', clp, schema, roleScope, 'find').rows).toBe('all');
    expect(() => checkClassPermission('Doc', clp, schema, alice, 'count')).toThrow(
      AccessDeniedError,
    );
    try {
      checkClassPermission('Doc', clp, schema, anonymous, 'find');
    } catch (e) {
      expect((e as AccessDeniedError).kind).toBe('clp_denied');
    }
    expect(checkClassPermission('Doc', { find: {} }, schema, master, 'find').rows).toBe('all');
  });

  it('requiresAuthentication refuses only the anonymous reader', () => {
    const clp = { find: { requiresAuthentication: true } };
    expect(checkClassPermission('Doc', clp, schema, alice, 'find').rows).toBe('all');
    expect(() => checkClassPermission('Doc', clp, schema, anonymous, 'find')).toThrow(
      /needs a signed-in user/,
    );
  });

  it('pointer permissions narrow the rows to those naming the user; without a user, no rows', () => {
    const clp = { find: { pointerFields: ['owner'] }, readUserFields: ['editors'] };
    const decision = checkClassPermission('Doc', clp, schema, alice, 'find');
    const user = { __type: 'Pointer', className: '_User', objectId: 'u1' };
    expect(decision).toEqual({
      rows: 'pointer',
      where: { $or: [{ owner: user }, { editors: { $all: [user] } }] },
    });
    expect(checkClassPermission('Doc', clp, schema, roleScope, 'find').rows).toBe('none');
    // The operation entry is checked first: a public entry wins over pointer permissions.
    expect(
      checkClassPermission('Doc', { ...clp, find: { '*': true } }, schema, alice, 'find').rows,
    ).toBe('all');
  });

  it('maps analytics operations to the find entry', () => {
    expect(clpOperationFor('group_by')).toBe('find');
    expect(clpOperationFor('aggregate')).toBe('find');
    expect(clpOperationFor('count')).toBe('count');
    expect(clpOperationFor('get')).toBe('get');
  });
});

describe('protectedFieldsFor (intersection of every applicable entry)', () => {
  const pf = { '*': ['secret', 'email'], 'role:staff': ['secret'], authenticated: ['secret', 'x'] };
  it('hides the intersection for a signed-in user with roles', () => {
    expect(protectedFieldsFor(pf, alice)).toEqual(['secret']);
  });
  it('hides the public set from the anonymous reader; nothing from the master key', () => {
    expect(protectedFieldsFor(pf, anonymous)).toEqual(['secret', 'email']);
    expect(protectedFieldsFor(pf, master)).toEqual([]);
  });
  it('an empty role entry exempts that role; userField entries never widen access here', () => {
    expect(protectedFieldsFor({ '*': ['secret'], 'role:staff': [] }, alice)).toEqual([]);
    expect(protectedFieldsFor({ '*': ['secret'], 'userField:owner': [] }, alice)).toEqual([
      'secret',
    ]);
  });
  it('merges the server option into the schema entry as Parse does', () => {
    expect(mergeProtectedFields({ '*': ['a'] }, { '*': ['email'], 'role:x': ['b'] })).toEqual({
      '*': ['a', 'email'],
      'role:x': ['b'],
    });
  });
});
