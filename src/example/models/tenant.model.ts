import {
  AgentDescription,
  AgentField,
  AgentFields,
  AgentTenantShared,
  AgentVisible,
  ParseClass,
} from 'nestjs-parse-agent';

// The tenants themselves: no tenant field to scope by. Each row's ACL (the tenant's staff and the
// admins) is what keeps a user to their own tenant's row, here and on /parse alike.
@ParseClass('Tenant')
@AgentVisible()
@AgentTenantShared()
@AgentDescription('The companies using the platform; every tenant-scoped row names one by slug.')
@AgentFields('slug', 'name', 'plan')
export class Tenant {
  @AgentField({ description: 'Short unique id; the tenantId of every row the tenant owns.' })
  slug!: string;

  @AgentField({ description: 'Company name.' })
  name!: string;

  @AgentField({ description: 'Subscription plan, e.g. growth or enterprise.' })
  plan!: string;
}
