import {
  AgentCanonicalFilter,
  AgentMethod,
  type AgentMethodContext,
  AgentDescription,
  AgentField,
  AgentFields,
  AgentJoinFields,
  AgentTenantScope,
  AgentVisible,
  ParseClass,
} from 'nestjs-parse-agent';
import { operatorBypass } from './tenant-scope';

@ParseClass('Customer')
@AgentVisible()
@AgentDescription('People and companies who buy from a tenant. Soft-deleted customers are hidden.')
@AgentFields('tenantId', 'name', 'email', 'city', 'country', 'tier', 'lifetimeValue')
@AgentJoinFields('name', 'city', 'tier')
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId', { bypass: operatorBypass })
export class Customer {
  @AgentField({ description: 'Tenant slug the customer belongs to.' })
  tenantId!: string;

  @AgentField({
    description: 'Loyalty tier.',
    enum: { bronze: 'New or occasional buyer', silver: 'Regular buyer', gold: 'Top spender' },
  })
  tier!: string;

  @AgentField({ description: 'Total spent, in the tenant currency.' })
  lifetimeValue!: number;

  @AgentField({ description: 'Full name, or the company name.' })
  name!: string;

  @AgentField({ description: 'Contact email address.' })
  email!: string;

  @AgentField({ description: 'City of the billing address.' })
  city!: string;

  @AgentField({ description: 'Country of the billing address, as an ISO 3166 code.' })
  country!: string;

  /**
   * Erases a customer's personal data (name, email, phone, city) and keeps the row for order
   * history. Admin tier: the person is asked to confirm before it runs.
   */
  @AgentMethod({
    permission: 'admin',
    description:
      'Erase this customer’s personal data (GDPR request). Orders stay. Irreversible; try dry_run first.',
    supportsDryRun: true,
  })
  async anonymize(_args: Record<string, never>, ctx: AgentMethodContext) {
    const erased = ['name', 'email', 'phone', 'city'];
    if (ctx.dryRun) return { would_anonymize: ctx.objectId, current_name: this.name, erased };
    await ctx.data.update!(
      'Customer',
      ctx.objectId!,
      { name: 'Anonymized customer', email: null, phone: null, city: null },
      ctx.signal,
    );
    return { anonymized: ctx.objectId, erased };
  }
}
