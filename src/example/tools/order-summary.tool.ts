import { Injectable } from '@nestjs/common';
import { AgentTool, type ArgumentsOf, type PolicedToolContext } from 'nestjs-parse-agent';

/** The tool's arguments, stated once: the handler's type is read from this schema. */
const ORDER_SUMMARY_INPUT = {
  type: 'object',
  properties: {
    customer_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The objectId of the Customer.',
    },
    recent: {
      type: 'integer',
      minimum: 1,
      maximum: 20,
      description: 'How many of the most recent orders to list (default 5).',
    },
  },
  required: ['customer_id'],
  additionalProperties: false,
} as const;

/** `{ customer_id: string; recent?: number }`, derived: it cannot drift from the schema. */
export type OrderSummaryArgs = ArgumentsOf<typeof ORDER_SUMMARY_INPUT>;

/** The fields of an order the summary shows. */
const SUMMARY_KEYS = ['orderNumber', 'status', 'total', 'placedAt'];

/**
 * A tool of the application's own, found at bootstrap because this provider sits in a module that
 * imports ParseAgentModule. Declaring no `access`, it reads as the calling agent through
 * `context.read`, the reader the built-in tools use: the class gate first, then the agent's tenant
 * scope, filters and the canonical filter ANDed into the where, the data path bound to its
 * identity, and the rows redacted for it. A customer of another tenant therefore has no orders
 * here, the same answer as a customer that does not exist.
 */
@Injectable()
export class OrderSummaryTool {
  @AgentTool({
    name: 'order_summary',
    description:
      "One customer's orders as you may read them: how many there are, and the most recent ones (order number, status, total, date).",
    inputSchema: ORDER_SUMMARY_INPUT,
    category: 'reports',
    timeout: 20,
  })
  async orderSummary(args: OrderSummaryArgs, { read }: PolicedToolContext) {
    const where = { customer: args.customer_id };
    const [orderCount, page] = await Promise.all([
      read.count('Order', { where }),
      read.find('Order', {
        where,
        keys: SUMMARY_KEYS,
        order: '-placedAt',
        limit: args.recent ?? 5,
      }),
    ]);
    return {
      customer_id: args.customer_id,
      order_count: orderCount,
      recent: page.rows.map(withPlainDates),
    };
  }
}

/** Parse's `{ __type: 'Date', iso }` as the ISO string an agent reads more cheaply. */
function withPlainDates(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    const date = value as { __type?: unknown; iso?: unknown } | null;
    out[key] = date && typeof date === 'object' && date.__type === 'Date' ? date.iso : value;
  }
  return out;
}
