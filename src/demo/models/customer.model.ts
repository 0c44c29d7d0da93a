import {
  AgentCanonicalFilter,
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
}
