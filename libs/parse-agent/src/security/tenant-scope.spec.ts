import { AccessDeniedError } from '../core/errors';
import type { ClassMetadata, TenantScope, TenantScopeSubject } from '../metadata/metadata.types';
import {
  assertNoTenantSpoof,
  resolveTenantScope,
  rowInTenant,
  type ResolvedTenant,
} from './tenant-scope';

function metaWith(tenantScope?: TenantScope): ClassMetadata {
  return {
    className: 'Order',
    modelName: 'Order',
    visible: false,
    largeFields: [],
    allowCollscan: false,
    fieldDocs: {},
    propertyToWire: {},
    references: {},
    relations: [],
    methods: [],
    tenantScope,
  };
}

function agent(overrides: Partial<TenantScopeSubject> = {}): TenantScopeSubject {
  return {
    tenantId: 't1',
    permissions: 'readonly',
    usingMasterKey: false,
    authType: 'session_token',
    ...overrides,
  };
}

const byTenantId = (a: TenantScopeSubject) => a.tenantId;

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

function expectTenantDenial(error: unknown) {
  expect(error).toBeInstanceOf(AccessDeniedError);
  const denial = error as AccessDeniedError;
  expect(denial.errorCode).toBe('access_denied');
  expect(denial.kind).toBe('tenant_scope');
  expect(denial.details).toEqual({ kind: 'tenant_scope' });
  return denial;
}

describe('resolveTenantScope', () => {
  it('returns no binding for an unknown class or a class without a tenant scope', () => {
    expect(resolveTenantScope(undefined, agent())).toBeUndefined();
    expect(resolveTenantScope(metaWith(), agent())).toBeUndefined();
  });

  it('binds the class field to the value `from` returns for the agent', () => {
    const from = jest.fn(byTenantId);
    const subject = agent();
    expect(resolveTenantScope(metaWith({ field: 'tenantId', from }), subject)).toEqual({
      field: 'tenantId',
      value: 't1',
    });
    expect(from).toHaveBeenCalledWith(subject);
  });

  it('accepts numeric tenant values, including 0', () => {
    expect(resolveTenantScope(metaWith({ field: 'orgId', from: () => 0 }), agent())).toEqual({
      field: 'orgId',
      value: 0,
    });
  });

  it('returns no binding when bypass returns true, without asking for a tenant', () => {
    const from = jest.fn(byTenantId);
    const scope = { field: 'tenantId', from, bypass: (a: TenantScopeSubject) => a.usingMasterKey };
    expect(resolveTenantScope(metaWith(scope), agent({ usingMasterKey: true }))).toBeUndefined();
    expect(from).not.toHaveBeenCalled();
  });

  it('does not bypass when the predicate returns a truthy non-boolean', () => {
    const bypass = (() => 'yes') as unknown as (a: TenantScopeSubject) => boolean;
    expect(
      resolveTenantScope(metaWith({ field: 'tenantId', from: byTenantId, bypass }), agent()),
    ).toEqual({ field: 'tenantId', value: 't1' });
  });

  it('treats a bypass predicate that throws as not bypassed (fail closed)', () => {
    const bypass = () => {
      throw new Error('role lookup failed');
    };
    const scope = { field: 'tenantId', from: byTenantId, bypass };
    expect(resolveTenantScope(metaWith(scope), agent())).toEqual({
      field: 'tenantId',
      value: 't1',
    });
    expectTenantDenial(
      thrownBy(() => resolveTenantScope(metaWith(scope), agent({ tenantId: undefined }))),
    );
  });

  it.each([[undefined], [null], ['']])(
    'refuses an agent whose tenant is %p with AccessDeniedError kind tenant_scope',
    (value) => {
      const scope = { field: 'tenantId', from: () => value };
      const denial = expectTenantDenial(
        thrownBy(() => resolveTenantScope(metaWith(scope), agent())),
      );
      expect(denial.message).toContain("'Order'");
      expect(denial.message).toContain('tenant');
    },
  );
});

describe('assertNoTenantSpoof', () => {
  const tenant: ResolvedTenant = { field: 'tenantId', value: 't1' };
  const spoof = (where: Record<string, unknown>, t = tenant) =>
    thrownBy(() => assertNoTenantSpoof(where, t, 'Order'));

  it('accepts wheres that do not name the tenant field', () => {
    expect(() => assertNoTenantSpoof({ status: 'open' }, tenant, 'Order')).not.toThrow();
    expect(() => assertNoTenantSpoof({}, tenant, 'Order')).not.toThrow();
    expect(() =>
      assertNoTenantSpoof({ tenantIdentifier: 'x', tenant: 't2' }, tenant, 'Order'),
    ).not.toThrow();
  });

  it("accepts the agent's own tenant value in either spelling", () => {
    expect(() => assertNoTenantSpoof({ tenantId: 't1' }, tenant, 'Order')).not.toThrow();
    expect(() => assertNoTenantSpoof({ tenant_id: 't1' }, tenant, 'Order')).not.toThrow();
    expect(() =>
      assertNoTenantSpoof({ $or: [{ tenantId: 't1' }, { a: 1 }] }, tenant, 'Order'),
    ).not.toThrow();
  });

  it('refuses another tenant value under the camelCase and the snake_case spelling', () => {
    const denial = expectTenantDenial(spoof({ tenantId: 't2' }));
    expect(denial.message).toContain('Tenant scope conflict');
    expect(denial.message).toContain("'tenantId'");
    expect(denial.message).toContain("'Order'");
    expectTenantDenial(spoof({ tenant_id: 't2' }));
  });

  it('matches both spellings when the scope field is declared in snake_case', () => {
    const snake = { field: 'tenant_id', value: 't1' };
    expectTenantDenial(spoof({ tenantId: 't2' }, snake));
    expectTenantDenial(spoof({ tenant_id: 't2' }, snake));
    expect(() => assertNoTenantSpoof({ tenantId: 't1' }, snake, 'Order')).not.toThrow();
  });

  it('refuses spoofs inside $or, $and and $nor at any depth', () => {
    expectTenantDenial(spoof({ $or: [{ status: 'open' }, { tenantId: 't2' }] }));
    expectTenantDenial(spoof({ $and: [{ $or: [{ a: 1 }, { $nor: [{ tenant_id: 't2' }] }] }] }));
  });

  it.each([
    [{ $ne: 't1' }],
    [{ $in: ['t1', 't2'] }],
    [{ $nin: ['t1'] }],
    [{ $exists: false }],
    [{ $regex: '.*' }],
    [{ $eq: 't2' }],
  ])('refuses the operator object %p on the tenant field', (constraint) => {
    expectTenantDenial(spoof({ tenantId: constraint }));
    expectTenantDenial(spoof({ $or: [{ tenant_id: constraint }] }));
  });

  it('refuses dotted paths into the tenant field', () => {
    expectTenantDenial(spoof({ 'tenantId.value': 't2' }));
  });

  it('compares values strictly: a numeric tenant is not matched by its string form', () => {
    expectTenantDenial(spoof({ orgId: '42' }, { field: 'orgId', value: 42 }));
    expect(() =>
      assertNoTenantSpoof({ orgId: 42 }, { field: 'orgId', value: 42 }, 'Order'),
    ).not.toThrow();
  });
});

describe('rowInTenant', () => {
  const tenant = { field: 'tenantId', value: 't1' };

  it('is true when the row carries the tenant value under either spelling', () => {
    expect(rowInTenant({ objectId: 'a', tenantId: 't1' }, tenant)).toBe(true);
    expect(rowInTenant({ objectId: 'a', tenant_id: 't1' }, tenant)).toBe(true);
    expect(rowInTenant({ tenantId: 't1' }, { field: 'tenant_id', value: 't1' })).toBe(true);
  });

  it('is false for another tenant, a missing field or a loosely equal value', () => {
    expect(rowInTenant({ tenantId: 't2' }, tenant)).toBe(false);
    expect(rowInTenant({ objectId: 'a' }, tenant)).toBe(false);
    expect(rowInTenant({ tenantId: null }, tenant)).toBe(false);
    expect(rowInTenant({ orgId: '42' }, { field: 'orgId', value: 42 })).toBe(false);
  });
});
