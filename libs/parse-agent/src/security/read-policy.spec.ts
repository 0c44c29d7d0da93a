import 'reflect-metadata';
import type { AgentIdentity } from '../core/agent-identity';
import type { ParseSchema, SchemaSource } from '../core/parse-schema';
import { AccessDeniedError, InvalidQueryError } from '../core/errors';
import { ParseClass } from '../metadata/decorators/parse-class.decorator';
import { AgentFields } from '../metadata/decorators/agent-fields.decorators';
import { AgentCanonicalFilter } from '../metadata/decorators/agent-canonical-filter.decorator';
import { AgentTenantScope } from '../metadata/decorators/agent-tenant-scope.decorator';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { validatePipeline } from './pipeline/pipeline-validator';
import { pipelinePolicyFor } from './read-pipeline-policy';
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

@ParseClass('Contact')
@AgentFields('name', 'email', 'tier')
class Contact {}

describe('ReadPolicy: refusals list only fields this agent may use', () => {
  const contactSchemas = (): SchemaSource => {
    const map = new Map<string, ParseSchema>([
      [
        'Contact',
        {
          className: 'Contact',
          fields: {
            name: { type: 'String' },
            email: { type: 'String' },
            tier: { type: 'String' },
            isDeleted: { type: 'Boolean' },
            deletedAt: { type: 'Date' },
          },
          classLevelPermissions: { protectedFields: { '*': ['email'], 'role:admin': [] } },
        },
      ],
    ]);
    return { get: async (n) => map.get(n), all: async () => map, invalidate: () => undefined };
  };
  const policyFor = (identity: AgentIdentity) =>
    new ReadPolicy(
      identity,
      new MetadataRegistry().register(Contact),
      contactSchemas(),
      undefined,
      {},
    );
  const master: AgentIdentity = {
    agentId: 'm',
    permissions: 'readonly',
    authType: 'master_key',
    usingMasterKey: true,
  };

  it('leaves a field protectedFields may hide out of the allowed list (REST path refusals)', async () => {
    const access = policyFor(alice);
    await access.requireReadableClass('Contact');
    expect(access.usableFields('Contact')).toEqual([
      'objectId',
      'createdAt',
      'updatedAt',
      'name',
      'tier',
    ]);
    const error = (await thrown(
      access.planWhere('Contact', { isDeleted: true }),
    )) as AccessDeniedError;
    expect(error).toBeInstanceOf(AccessDeniedError);
    expect(error.message).toContain('Allowed: objectId, createdAt, updatedAt, name, tier');
    expect(error.message).not.toMatch(/email|deletedAt/);
    expect(JSON.stringify(error.details)).not.toContain('email');
    // A near miss of the protected name is not suggested either.
    const near = (await thrown(access.planWhere('Contact', { emial: 'x' }))) as Error;
    expect(near.message).not.toContain('email');
    // The master key sees every field, so it is told about all of them.
    const full = policyFor(master);
    await full.requireReadableClass('Contact');
    expect(full.usableFields('Contact')).toContain('email');
  });

  it("projects pipelines to the user's view and refuses withheld fields without naming them", async () => {
    const access = policyFor(alice);
    await access.requireReadableClass('Contact');
    const withheld = new Map([['Contact', ['email']]]);
    const policy = await pipelinePolicyFor(access, { withheld });
    const { pipeline } = validatePipeline('Contact', [{ $limit: 5 }], policy);
    expect(pipeline[0]).toEqual({
      $project: { objectId: 1, createdAt: 1, updatedAt: 1, name: 1, tier: 1 },
    });
    for (const stage of [{ $group: { _id: '$email' } }, { $match: { isDeleted: true } }]) {
      const error = (() => {
        try {
          validatePipeline('Contact', [stage], policy);
        } catch (e) {
          return e as AccessDeniedError;
        }
      })();
      expect(error).toBeInstanceOf(AccessDeniedError);
      expect(error?.message).not.toMatch(/protected|deletedAt/);
      const allowedHere = error?.message.split('Allowed here:')[1];
      expect(allowedHere).toBe(
        ' createdAt, name, objectId, tier, updatedAt. Reference one of these fields instead.',
      );
      expect(error?.details).toMatchObject({
        allowed_fields: ['createdAt', 'name', 'objectId', 'tier', 'updatedAt'],
      });
    }
    // An admin's view keeps the field (nothing withheld).
    const full = await pipelinePolicyFor(access, { withheld: new Map() });
    expect(validatePipeline('Contact', [{ $limit: 5 }], full).pipeline[0]).toMatchObject({
      $project: { email: 1 },
    });
  });
});
