import 'reflect-metadata';
import type { AgentIdentity } from '../core/agent-identity';
import type { ParseSchema, SchemaSource } from '../core/parse-schema';
import { AccessDeniedError, InvalidQueryError } from '../core/errors';
import { ParseClass } from '../metadata/decorators/parse-class.decorator';
import { AgentFields } from '../metadata/decorators/agent-fields.decorators';
import { AgentCanonicalFilter } from '../metadata/decorators/agent-canonical-filter.decorator';
import { AgentTenantScope } from '../metadata/decorators/agent-tenant-scope.decorator';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { ReadPolicy } from './read-policy';

@ParseClass('Customer')
@AgentFields('tenantId', 'name', 'city')
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId', { from: (a) => a.tenantId })
class Customer {}

@ParseClass('Tenant')
@AgentFields('slug')
class Tenant {}

@ParseClass('Team')
@AgentTenantScope('tenantId', { from: (a) => a.tenantId })
class Team {}

const schemas = (names: string[]): SchemaSource => {
  const map = new Map<string, ParseSchema>(names.map((n) => [n, { className: n, fields: {} }]));
  return { get: async (n) => map.get(n), all: async () => map, invalidate: () => undefined };
};

const alice: AgentIdentity = {
  agentId: 'a',
  permissions: 'readonly',
  authType: 'session_token',
  usingMasterKey: false,
  sessionToken: 'r:x',
  tenantId: 'acme',
};

function policy(filters = {}) {
  const registry = new MetadataRegistry().register(Customer, Tenant, Team);
  return new ReadPolicy(
    alice,
    registry,
    schemas(['Customer', 'Tenant', 'Team', 'ApiCredential']),
    undefined,
    filters,
  );
}

const thrown = async (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('ReadPolicy: subqueries', () => {
  it('ANDs the inner class canonical filter, per-agent filters and tenant into a $select', async () => {
    const { where } = await policy({
      Customer: { tier: 'gold' },
      default: { archived: false },
    }).planWhere('Tenant', {
      slug: {
        $select: { query: { className: 'Customer', where: { city: 'Osaka' } }, key: 'tenantId' },
      },
    });
    // The outer class gets the default filter; the inner one its own layers plus the tenant.
    expect(where).toEqual({
      $and: [
        {
          slug: {
            $select: {
              query: {
                className: 'Customer',
                where: {
                  $and: [
                    { city: 'Osaka' },
                    { isDeleted: { $ne: true } },
                    { tier: 'gold' },
                    { archived: false },
                    { tenantId: 'acme' },
                  ],
                },
              },
              key: 'tenantId',
            },
          },
        },
        { archived: false },
      ],
    });
  });

  it('scopes nested subqueries and subqueries inside $or', async () => {
    const { where } = await policy().planWhere('Tenant', {
      $or: [
        {
          slug: {
            $inQuery: { className: 'Team', where: { x: { $inQuery: { className: 'Customer' } } } },
          },
        },
      ],
    });
    const text = JSON.stringify(where);
    expect(text.match(/"tenantId":"acme"/g)).toHaveLength(2);
    expect(text).toContain('"isDeleted":{"$ne":true}');
  });

  it('refuses another tenant, a non-allowlisted field or key, and hidden classes inside', async () => {
    const p = policy();
    const sel = (where: object, key = 'tenantId', className = 'Customer') => ({
      slug: { $select: { query: { className, where }, key } },
    });
    expect(await thrown(p.planWhere('Tenant', sel({ tenantId: 'globex' })))).toMatchObject({
      kind: 'tenant_scope',
    });
    expect(await thrown(p.planWhere('Tenant', sel({ phone: '1' })))).toMatchObject({
      kind: 'field_denied',
      info: { deniedField: 'phone' },
    });
    expect(await thrown(p.planWhere('Tenant', sel({}, 'phone')))).toMatchObject({
      info: { deniedField: 'phone' },
    });
    const hidden = (await thrown(p.planWhere('Tenant', sel({}, 'k', 'ApiCredential')))) as Error;
    const missing = (await thrown(p.planWhere('Tenant', sel({}, 'k', 'Nope')))) as Error;
    expect(hidden).toBeInstanceOf(AccessDeniedError);
    expect(hidden.message.replace('ApiCredential', 'X')).toBe(missing.message.replace('Nope', 'X'));
  });

  it('refuses $relatedTo on a scoped class and checks its key', async () => {
    const p = policy();
    const related = (className: string, key: string) => ({
      $relatedTo: { object: { __type: 'Pointer', className, objectId: 'o1' }, key },
    });
    expect(await thrown(p.planWhere('Tenant', related('Customer', 'name')))).toBeInstanceOf(
      InvalidQueryError,
    );
    expect(await thrown(p.planWhere('Customer', related('Tenant', 'members')))).toMatchObject({
      info: { deniedField: 'members' },
    });
    await expect(p.planWhere('Customer', related('Tenant', 'slug'))).resolves.toBeDefined();
  });
});
