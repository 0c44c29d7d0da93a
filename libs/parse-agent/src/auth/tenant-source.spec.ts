import { roleNameMatcher, tenantSourceProblem } from './tenant-source';

describe('tenant sources', () => {
  it('turns a role pattern into a matcher that names the tenant', () => {
    const staff = roleNameMatcher('{tenant}-staff');
    expect(staff('acme-staff')).toBe('acme');
    expect(staff('globex-staff')).toBe('globex');
    expect(staff('staff')).toBeUndefined();
    expect(staff('admin')).toBeUndefined();
    expect(staff('acme-staff-x')).toBeUndefined();
    expect(staff('x.acme-staff')).toBeUndefined();
    const prefixed = roleNameMatcher('tenant.{tenant}');
    expect(prefixed('tenant.acme')).toBe('acme');
    // The dot is literal, not "any character".
    expect(prefixed('tenantXacme')).toBeUndefined();
  });

  it('accepts exactly one source, and says how to write it otherwise', () => {
    expect(tenantSourceProblem({ fromRole: '{tenant}-staff' })).toBeUndefined();
    expect(tenantSourceProblem({ fromRole: (name: string) => name })).toBeUndefined();
    expect(tenantSourceProblem({ fromUserField: 'tenantId' })).toBeUndefined();
    expect(tenantSourceProblem({})).toMatch(/exactly one of fromRole and fromUserField/);
    expect(tenantSourceProblem({ fromRole: '{tenant}', fromUserField: 'tenantId' })).toMatch(
      /exactly one/,
    );
    expect(tenantSourceProblem({ fromRole: 'staff' })).toMatch(/one \{tenant\} placeholder/);
    expect(tenantSourceProblem({ fromRole: '{tenant}-{tenant}' })).toMatch(/one \{tenant\}/);
    expect(tenantSourceProblem({ fromUserField: 'tenant id' })).toMatch(/_User field/);
    expect(tenantSourceProblem('acme')).toMatch(/must be/);
  });
});
