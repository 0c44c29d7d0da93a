import { AgentValidationError } from '../../../core/errors';
import { readTool } from '../../read/read-tool';
import { classArguments, classResult, WHERE_ARG } from '../tool-schemas';
import { nullable } from '../output-schemas';

export const explainQuery = readTool({
  name: 'explain_query',
  description:
    'Explain how the database would run a query on a class (no rows): whether it scans the whole collection or uses an index. Give where/order for a query, or pipeline for an aggregate pipeline (its SQL plan on the direct PostgreSQL path).',
  category: 'query',
  dataOperation: 'explain',
  timeout: 30,
  inputSchema: classArguments({
    where: WHERE_ARG,
    order: { type: 'string', description: 'Sort fields, e.g. "-createdAt".' },
    pipeline: {
      type: 'array',
      items: { type: 'object' },
      description:
        'Instead of where/order: aggregation stages as the aggregate tool takes them; explains the plan without running it.',
    },
  }),
  outputSchema: classResult(
    {
      collection_scan: { type: 'boolean' },
      plan: { type: 'string' },
      pipeline_stages: { type: 'integer' },
      indexes_used: { type: 'array', items: { type: 'string' } },
      // The path's plan details (a MongoDB or PostgreSQL plan object), null when it has none.
      winning_plan: nullable({ type: 'object' }),
    },
    ['collection_scan', 'plan'],
  ),
  handler: async (args, { read, analytics }) => {
    const className = args.class_name;
    if (args.pipeline !== undefined && (args.where !== undefined || args.order !== undefined)) {
      throw new AgentValidationError(
        'explain_query takes either pipeline or where/order, not both: put the filter in a $match stage.',
      );
    }
    const summary = args.pipeline
      ? await read.explainPipeline(className, args.pipeline)
      : await read.explain(className, { where: args.where, order: args.order });
    read.refuseCollectionScan(className, summary);
    // Index names and plans map the index topology: only shown when the operator allows it.
    return {
      class_name: className,
      collection_scan: summary.collectionScan,
      plan: summary.winningPlan,
      ...('stages' in summary ? { pipeline_stages: summary.stages } : {}),
      ...(analytics.exposeExplain
        ? { indexes_used: summary.indexesUsed, winning_plan: summary.details ?? null }
        : {}),
    };
  },
});
