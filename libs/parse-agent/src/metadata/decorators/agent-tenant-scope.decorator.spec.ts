import 'reflect-metadata';
import { ParseAgentConfigError } from '../../core/errors';
import { MetadataRegistry } from '../metadata-registry';
import type { TenantScopeSubject } from '../metadata.types';
import { AgentTenantScope } from './agent-tenant-scope.decorator';

const subject: TenantScopeSubject = {
  tenantId: 't1',
  permissions: 'readonly',
  usingMasterKey: false,
  authType: 'session_token',
  aclRole: 'ops',
};

describe('@AgentTenantScope', () => {
  it("defaults `from` to the agent's tenantId", () => {
    @AgentTenantScope('tenantId')
    class Order {}
    const scope = new MetadataRegistry().register(Order).get('Order')!.tenantScope!;
    expect(scope.field).toBe('tenantId');
    expect(scope.from(subject)).toBe('t1');
    expect(scope.bypass).toBeUndefined();
  });

  it('keeps the from and bypass functions it was given', () => {
    const from = (a: TenantScopeSubject) => a.aclRole;
    const bypass = (a: TenantScopeSubject) => a.usingMasterKey;
    @AgentTenantScope('org_id', { from, bypass })
    class Order {}
    const scope = new MetadataRegistry().register(Order).get('Order')!.tenantScope!;
    expect(scope).toEqual({ field: 'org_id', from, bypass });
  });

  it.each(['', '_tenant', 'tenant.id', 'tenant id', '1tenant', 'sessionToken', 'authData'])(
    'refuses the field %p',
    (field) => {
      expect(() => AgentTenantScope(field)(class Order {})).toThrow(
        new ParseAgentConfigError(
          `@AgentTenantScope on Order: ${JSON.stringify(field)} is not a usable tenant field name.`,
        ),
      );
    },
  );

  it('refuses a non-string field', () => {
    expect(() => AgentTenantScope(undefined as never)(class Order {})).toThrow(
      ParseAgentConfigError,
    );
  });

  it.each([['tenantId'], [42], [{}]])('refuses a `from` that is not a function (%p)', (from) => {
    expect(() => AgentTenantScope('tenantId', { from: from as never })(class Order {})).toThrow(
      '@AgentTenantScope on Order: `from` must be a function (agent) => tenant value.',
    );
  });

  it('refuses a `bypass` that is not a function', () => {
    expect(() => AgentTenantScope('tenantId', { bypass: true as never })(class Order {})).toThrow(
      '@AgentTenantScope on Order: `bypass` must be a function (agent) => boolean.',
    );
  });
});
