import {
  buildDistinctPipeline,
  DISTINCT_DEFAULT_LIMIT,
  DISTINCT_MAX_LIMIT,
  shapeDistinctResult,
} from '../../../security/pipeline/distinct-pipeline';
import { resolveLimit } from '../../../security/pipeline/group-by-pipeline';
import type { ToolDefinition } from '../../tool-definition';
import { READ_ONLY_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG, WHERE_ARG } from '../tool-schemas';
import { DRY_RUN_PROPERTIES, FIELD_ARG } from './analytics-schemas';
import {
  DRY_RUN_ARG,
  dryRunEnvelope,
  pathOptions,
  pointerTarget,
  runPipeline,
  validateFor,
  withheldFor,
} from './analytics-support';
import { dryRunFlag } from '../dry-run-flag';

interface Args {
  class_name: string;
  field: string;
  where?: Record<string, unknown>;
  sort?: 'asc' | 'desc';
  limit?: number;
  flatten_arrays?: boolean;
  dry_run?: boolean;
}

/** Values in a stable order for the `sort` argument: numbers, then strings, then the rest as JSON. */
function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = typeof a === 'string' ? a : JSON.stringify(a);
  const sb = typeof b === 'string' ? b : JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

export const distinct: ToolDefinition<Args> = {
  name: 'distinct',
  description:
    'List the distinct values of one field of a class (optionally filtered). Pointer values come back as objectIds with pointer_class.',
  category: 'aggregate',
  permission: 'readonly',
  dataOperation: 'distinct',
  timeout: 30,
  annotations: READ_ONLY_TOOL,
  inputSchema: {
    type: 'object',
    properties: {
      class_name: CLASS_NAME_ARG,
      field: FIELD_ARG,
      where: WHERE_ARG,
      sort: { type: 'string', enum: ['asc', 'desc'], description: 'Sort the values.' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: DISTINCT_MAX_LIMIT,
        description: `Values to return (default ${DISTINCT_DEFAULT_LIMIT}, max ${DISTINCT_MAX_LIMIT}).`,
      },
      flatten_arrays: {
        type: 'boolean',
        description: 'List each element of an array field as its own value.',
      },
      dry_run: DRY_RUN_ARG,
    },
    required: ['class_name', 'field'],
  },
  outputSchema: {
    type: 'object',
    properties: {
      class_name: { type: 'string' },
      field: { type: 'string' },
      count: { type: 'integer' },
      values: { type: 'array' },
      pointer_class: { type: 'string' },
      truncated: { type: 'boolean' },
      ...DRY_RUN_PROPERTIES,
    },
    required: ['class_name'],
  },
  handler: async (args, context) => {
    const { access } = context;
    const className = args.class_name;
    await access.requireReadableClass(className);
    const limit = resolveLimit(args.limit, DISTINCT_DEFAULT_LIMIT, DISTINCT_MAX_LIMIT);
    const pipeline = buildDistinctPipeline({
      field: args.field,
      where: args.where,
      sort: args.sort,
      limit,
      flattenArrays: args.flatten_arrays,
    });
    const withheld = await withheldFor(context, 'distinct', className, pipeline);
    const validated = await validateFor(access, className, pipeline, {}, withheld);
    const pointerClass = await pointerTarget(access, className, args.field);
    if (dryRunFlag(args.dry_run)) {
      return dryRunEnvelope(
        className,
        { field: args.field, sort: args.sort, limit, flatten_arrays: args.flatten_arrays },
        pipeline,
      );
    }
    const path = context.dataFor('distinct');
    let rows: { _id?: unknown }[];
    if (path.distinct && !(args.flatten_arrays && path.aggregate)) {
      const { where } = await access.planWhere(className, args.where);
      let values = await path.distinct(
        className,
        { field: args.field, where, limit },
        pathOptions(context),
      );
      if (args.sort) {
        values = [...values].sort(compareValues);
        if (args.sort === 'desc') values.reverse();
      }
      rows = values.map((v) => ({ _id: v }));
    } else {
      rows = await runPipeline(context, 'distinct', className, validated.pipeline, args.where);
    }
    return shapeDistinctResult({
      className,
      field: args.field,
      limit,
      rows: access.redactRows(rows),
      pointerClass,
    });
  },
};
