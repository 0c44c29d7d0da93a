import { DataPathUnavailableError } from '../../../data/data-router';
import type { ToolDefinition } from '../../tool-definition';
import { READ_ONLY_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG, WHERE_ARG } from '../tool-schemas';
import { CollscanRefusedError, pathOptions } from './analytics-support';
import { nullable } from '../output-schemas';

interface Args {
  class_name: string;
  where?: Record<string, unknown>;
  order?: string;
}

export const explainQuery: ToolDefinition<Args> = {
  name: 'explain_query',
  description:
    'Explain how the database would run a query on a class (no rows): whether it scans the whole collection or uses an index.',
  category: 'query',
  permission: 'readonly',
  dataOperation: 'explain',
  timeout: 30,
  annotations: READ_ONLY_TOOL,
  inputSchema: {
    type: 'object',
    properties: {
      class_name: CLASS_NAME_ARG,
      where: WHERE_ARG,
      order: { type: 'string', description: 'Sort fields, e.g. "-createdAt".' },
    },
    required: ['class_name'],
  },
  outputSchema: {
    type: 'object',
    properties: {
      class_name: { type: 'string' },
      collection_scan: { type: 'boolean' },
      plan: { type: 'string' },
      indexes_used: { type: 'array', items: { type: 'string' } },
      // The path's plan details (a MongoDB or PostgreSQL plan object), null when it has none.
      winning_plan: nullable({ type: 'object' }),
    },
    required: ['class_name', 'collection_scan', 'plan'],
  },
  handler: async (args, context) => {
    const { access, analytics } = context;
    const className = args.class_name;
    await access.requireReadableClass(className);
    const order = access.checkOrder(className, args.order);
    const { where } = await access.planWhere(className, args.where);
    const path = context.dataFor('explain');
    if (!path.explain) {
      throw new DataPathUnavailableError(
        `The '${path.kind}' data path cannot explain queries. Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot).`,
      );
    }
    const summary = await path.explain(className, { where, order }, pathOptions(context));
    if (
      analytics.refuseCollscan &&
      summary.collectionScan &&
      !access.meta(className)?.allowCollscan
    ) {
      throw new CollscanRefusedError(
        className,
        analytics.exposeExplain ? summary.details : undefined,
      );
    }
    // Index names and plans map the index topology: only shown when the operator allows it.
    return {
      class_name: className,
      collection_scan: summary.collectionScan,
      plan: summary.winningPlan,
      ...(analytics.exposeExplain
        ? { indexes_used: summary.indexesUsed, winning_plan: summary.details ?? null }
        : {}),
    };
  },
};
