import {
  AgentCanonicalFilter,
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
  @BelongsTo(() => Customer)
  customer!: unknown;

  @BelongsTo(() => Product)
  product!: unknown;

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
}
