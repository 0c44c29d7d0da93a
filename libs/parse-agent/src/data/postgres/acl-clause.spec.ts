import { aclClause } from './acl-clause';
import { userPrincipals, userRolesQuery } from './role-principals-sql';
import { SqlParams } from './sql-params';

describe('aclClause', () => {
  it("matches public rows (NULL _rperm) or any shared principal, always including '*'", () => {
    const params = new SqlParams();
    expect(aclClause(['u1', 'role:a', 'u1'], params, 'b1')).toBe(
      '(b1."_rperm" IS NULL OR b1."_rperm" && $1::text[])',
    );
    expect(params.values).toEqual([['*', 'u1', 'role:a']]);
  });

  it('reads only public rows for an anonymous reader and no filter for the master key', () => {
    const params = new SqlParams();
    expect(aclClause([], params)).toBe('("_rperm" IS NULL OR "_rperm" && $1::text[])');
    expect(params.values).toEqual([['*']]);
    expect(aclClause('master', new SqlParams())).toBe('TRUE');
  });

  it('refuses malformed principals', () => {
    expect(() => aclClause([''], new SqlParams())).toThrow(/non-empty/);
    expect(() => aclClause('all' as never, new SqlParams())).toThrow(/principals/);
  });
});

describe('userRolesQuery', () => {
  it('walks membership then inheritance (child role -> parent role) with the user id bound', () => {
    const q = userRolesQuery(`u'1`);
    expect(q.values).toEqual([`u'1`]);
    expect(q.text).not.toContain(`u'1`);
    expect(q.text).toContain('WITH RECURSIVE');
    expect(q.text).toContain('FROM "_Join:users:_Role" AS m WHERE m."relatedId" = $1::text');
    expect(q.text).toContain('JOIN granted AS g ON i."relatedId" = g.role_id');
    expect(userPrincipals('u1', [{ principal: 'role:a' }])).toEqual(['*', 'u1', 'role:a']);
  });
});
