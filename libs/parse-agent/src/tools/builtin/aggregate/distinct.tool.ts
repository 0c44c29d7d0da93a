import {
  buildDistinctPipeline,
  DISTINCT_DEFAULT_LIMIT,
  DISTINCT_MAX_LIMIT,
  shapeDistinctResult,
} from '../../../security/pipeline/distinct-pipeline';
import { resolveLimit } from '../../../security/pipeline/group-by-pipeline';
import { readTool } from '../../read/read-tool';
import { READ_ONLY_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG, WHERE_ARG } from '../tool-schemas';
import { DRY_RUN_PROPERTIES, FIELD_ARG } from './analytics-schemas';
import { DRY_RUN_ARG, runHelper } from './analytics-support';

interface Args {
  class_name: string;
  field: string;
  where?: Record<string, unknown>;
  sort?: 'asc' | 'desc';
  limit?: number;
  flatten_arrays?: boolean;
  dry_run?: boolean;
}

export const distinct = readTool<Args>({
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
  handler: async (args, { read }) => {
    const className = args.class_name;
    await read.gate(className);
    const limit = resolveLimit(args.limit, DISTINCT_DEFAULT_LIMIT, DISTINCT_MAX_LIMIT);
    const pipeline = buildDistinctPipeline({
      field: args.field,
      where: args.where,
      sort: args.sort,
      limit,
      flattenArrays: args.flatten_arrays,
    });
    const result = await runHelper(read, 'distinct', className, {
      pipeline,
      where: args.where,
      // Flattening arrays is the pipeline's: a path that runs pipelines gets one.
      native: {
        distinct: { field: args.field, limit },
        sort: args.sort,
        pipelineWhenPossible: args.flatten_arrays,
      },
      pointerField: args.field,
      dryRun: args.dry_run,
      parameters: {
        field: args.field,
        sort: args.sort,
        limit,
        flatten_arrays: args.flatten_arrays,
      },
    });
    if ('dryRun' in result) return result.dryRun;
    return shapeDistinctResult({
      className,
      field: args.field,
      limit,
      rows: result.rows,
      pointerClass: result.pointerClass,
    });
  },
});
