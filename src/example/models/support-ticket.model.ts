import {
  AgentDescription,
  AgentMethod,
  type AgentMethodContext,
  AgentField,
  AgentFields,
  AgentLargeFields,
  AgentSearchable,
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
// semantic_search over subject and body; agents may narrow it by status and priority only.
@AgentSearchable({ fields: ['body', 'subject'], filterFields: ['status', 'priority'] })
export class SupportTicket {
  @BelongsTo(() => Customer)
  customer!: unknown;

  @AgentField({ description: 'Urgency.', enum: ['low', 'normal', 'high', 'urgent'] })
  priority!: string;

  @AgentField({ description: 'Ticket state.', enum: ['open', 'pending', 'closed'] })
  status!: string;

  /** Closes the ticket. No preview of its own: a dry run gets the generic "would call" answer. */
  @AgentMethod({
    permission: 'write',
    description: 'Close this support ticket (status becomes closed).',
  })
  async close(_args: Record<string, never>, ctx: AgentMethodContext) {
    if (this.status === 'closed') return { closed: ctx.objectId, changed: false };
    await ctx.data.update!('SupportTicket', ctx.objectId!, { status: 'closed' }, ctx.signal);
    return { closed: ctx.objectId, changed: true, previous_status: this.status };
  }
}
