import {
  AgentCanonicalFilter,
  AgentMethod,
  AgentValidationError,
  type AgentMethodContext,
  AgentDescription,
  AgentField,
  AgentFields,
  AgentTenantScope,
  AgentVisible,
  BelongsTo,
  ParseClass,
} from 'nestjs-parse-agent';
import { Customer } from './customer.model';
import { Product } from './product.model';
import { operatorBypass } from './tenant-scope';

@ParseClass('Order')
@AgentVisible()
@AgentDescription('Orders placed by customers. Soft-deleted (isDeleted) orders are excluded.')
@AgentFields(
  'tenantId',
  'orderNumber',
  'customer',
  'product',
  'quantity',
  'unitPrice',
  'total',
  'status',
  'channel',
  'placedAt',
)
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId', { bypass: operatorBypass })
export class Order {
  @AgentField({ description: 'Tenant slug the order belongs to.' })
  tenantId!: string;

  @BelongsTo(() => Customer)
  @AgentField({ description: 'The customer who placed the order.' })
  customer!: unknown;

  @BelongsTo(() => Product)
  @AgentField({ description: 'The product ordered.' })
  product!: unknown;

  @AgentField({ description: 'Units ordered.' })
  quantity!: number;

  @AgentField({
    description: 'Price of one unit at the time of the order, in the tenant currency.',
  })
  unitPrice!: number;

  @AgentField({
    description: 'Where the order is in its lifecycle.',
    enum: {
      pending: 'Placed, not yet paid',
      paid: 'Paid, waiting to ship',
      shipped: 'Handed to the carrier',
      delivered: 'Received by the customer',
      refunded: 'Money returned',
      cancelled: 'Cancelled before shipping',
    },
  })
  status!: string;

  @AgentField({ description: 'Sales channel.', enum: ['web', 'mobile', 'store'] })
  channel!: string;

  @AgentField({ description: 'quantity × unitPrice.' })
  total!: number;

  @AgentField({ description: 'When the order was placed.' })
  placedAt!: Date;

  @AgentField({ description: 'Human-readable order number, unique within the tenant.' })
  orderNumber!: string;

  /**
   * Refunds a paid, shipped or delivered order. The preview (dry run) says what would change; the
   * real call writes through the agent's own data path, so Parse checks the user's permissions.
   */
  @AgentMethod({
    permission: 'write',
    description:
      'Refund this order: its status becomes refunded. Only paid, shipped or delivered orders. Try dry_run first.',
    supportsDryRun: true,
    permittedKeys: ['reason'],
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', minLength: 3, maxLength: 200 } },
      required: ['reason'],
      additionalProperties: false,
    },
  })
  async refund(args: { reason: string }, ctx: AgentMethodContext) {
    if (!['paid', 'shipped', 'delivered'].includes(this.status)) {
      throw new AgentValidationError(
        `Order ${this.orderNumber} is ${this.status}; only paid, shipped or delivered orders can be refunded.`,
      );
    }
    const change = { from: this.status, to: 'refunded', amount: this.total, reason: args.reason };
    if (ctx.dryRun) return { would_refund: this.orderNumber, ...change };
    await ctx.data.update!('Order', ctx.objectId!, { status: 'refunded' }, ctx.signal);
    return { refunded: this.orderNumber, ...change };
  }
}
