import 'reflect-metadata';
import { resetSecurityBanners } from '../core/security-banner';
import { AgentHidden } from './decorators/agent-hidden.decorator';
import { AgentTenantScope, AgentTenantShared } from './decorators/agent-tenant-scope.decorator';
import { ParseClass } from './decorators/parse-class.decorator';
import { MetadataRegistry } from './metadata-registry';
import { unscopedVisibleClasses, warnUnscopedClasses } from './unscoped-classes';

const tenantOf = { from: (agent: { tenantId?: string }) => agent.tenantId };

@ParseClass('Order')
@AgentTenantScope('tenantId', tenantOf)
class Order {}

@ParseClass('Invoice')
@AgentTenantScope('tenantId', tenantOf)
class Invoice {}

@ParseClass('Customer')
class Customer {}

@ParseClass('Country')
class Country {}

@ParseClass('Currency')
@AgentTenantShared()
class Currency {}

@ParseClass('Secret')
@AgentHidden()
class Secret {}

describe('warning about unscoped classes beside scoped ones (issue 31, item 11)', () => {
  const banners: string[] = [];
  beforeEach(() => {
    banners.length = 0;
    resetSecurityBanners((line) => banners.push(line));
  });
  afterAll(() => resetSecurityBanners(() => undefined));

  const registry = (...models: Array<new () => unknown>) => {
    const metadata = new MetadataRegistry();
    metadata.register(...models);
    return metadata;
  };

  it('names every visible class without a tenant scope once another class declares one', () => {
    const metadata = registry(Order, Invoice, Customer, Country, Currency, Secret);
    expect(unscopedVisibleClasses(metadata)).toEqual(['Country', 'Customer']);
    expect(warnUnscopedClasses(metadata)).toEqual(['Country', 'Customer']);
    expect(banners).toHaveLength(2);
    expect(banners[0]).toMatch(
      /^Class 'Country' is visible to agents but declares no @AgentTenantScope, while Invoice, Order do/,
    );
    // A hidden class is out of every agent's reach, a shared one says so: nothing to warn about.
    expect(banners.join('\n')).not.toContain("'Secret'");
    expect(banners.join('\n')).not.toContain("'Currency'");
  });

  it('warns once per class and process, however often the check runs', () => {
    const metadata = registry(Order, Customer);
    warnUnscopedClasses(metadata);
    warnUnscopedClasses(metadata);
    warnUnscopedClasses(registry(Order, Customer));
    expect(banners.filter((b) => b.includes("'Customer'"))).toHaveLength(1);
  });

  it('refuses a class declared both scoped and shared, in either order', () => {
    expect(() => {
      @AgentTenantShared()
      @AgentTenantScope('tenantId', tenantOf)
      class Both {}
      return Both;
    }).toThrow(/both @AgentTenantScope and @AgentTenantShared/);
    expect(() => {
      @AgentTenantScope('tenantId', tenantOf)
      @AgentTenantShared()
      class Both {}
      return Both;
    }).toThrow(/both @AgentTenantScope and @AgentTenantShared/);
  });

  it('stays silent in a deployment without tenants, and when every visible class is scoped', () => {
    expect(warnUnscopedClasses(registry(Customer, Country))).toEqual([]);
    expect(warnUnscopedClasses(registry(Order, Invoice, Secret))).toEqual([]);
    expect(banners).toEqual([]);
  });
});
