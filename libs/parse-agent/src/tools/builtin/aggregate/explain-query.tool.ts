import { readTool } from '../../read/read-tool';
import { classArguments, classResult, WHERE_ARG } from '../tool-schemas';
import { nullable } from '../output-schemas';

interface Args {
  class_name: string;
  where?: Record<string, unknown>;
  order?: string;
}

export const explainQuery = readTool<Args>({
  name: 'explain_query',
  description:
    'Explain how the database would run a query on a class (no rows): whether it scans the whole collection or uses an index.',
  category: 'query',
  dataOperation: 'explain',
  timeout: 30,
  inputSchema: classArguments({
    where: WHERE_ARG,
    order: { type: 'string', description: 'Sort fields, e.g. "-createdAt".' },
  }),
  outputSchema: classResult(
    {
      collection_scan: { type: 'boolean' },
      plan: { type: 'string' },
      indexes_used: { type: 'array', items: { type: 'string' } },
      // The path's plan details (a MongoDB or PostgreSQL plan object), null when it has none.
      winning_plan: nullable({ type: 'object' }),
    },
    ['collection_scan', 'plan'],
  ),
  handler: async (args, { read, analytics }) => {
    const className = args.class_name;
    const summary = await read.explain(className, { where: args.where, order: args.order });
    read.refuseCollectionScan(className, summary);
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
});
