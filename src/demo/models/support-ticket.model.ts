import {
  AgentDescription,
  AgentField,
  AgentFields,
  AgentLargeFields,
  AgentTenantScope,
  BelongsTo,
  ParseClass,
} from 'nestjs-parse-agent';
import { Customer } from './customer.model';
import { operatorBypass } from './tenant-scope';

@ParseClass('SupportTicket')
@AgentDescription('Customer support tickets. Row ACLs decide which staff may read each ticket.')
@AgentFields('tenantId', 'subject', 'body', 'priority', 'status', 'customer')
@AgentLargeFields('body')
@AgentTenantScope('tenantId', { bypass: operatorBypass })
export class SupportTicket {
  @BelongsTo(() => Customer)
  customer!: unknown;

  @AgentField({ description: 'Urgency.', enum: ['low', 'normal', 'high', 'urgent'] })
  priority!: string;

  @AgentField({ description: 'Ticket state.', enum: ['open', 'pending', 'closed'] })
  status!: string;
}
