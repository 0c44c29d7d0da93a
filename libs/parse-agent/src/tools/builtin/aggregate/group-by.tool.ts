import type { GroupOperation as PathGroupOperation } from '../../../ports/data-path';
import {
  buildGroupByPipeline,
  GROUP_BY_DEFAULT_LIMIT,
  GROUP_BY_MAX_LIMIT,
  resolveLimit,
  shapeGroupByResult,
  type GroupOperation,
  type GroupRow,
  type GroupSort,
} from '../../../security/pipeline/group-by-pipeline';
import { readTool } from '../../read/read-tool';
import { READ_ONLY_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG, WHERE_ARG } from '../tool-schemas';
import {
  DRY_RUN_PROPERTIES,
  FIELD_ARG,
  GROUP_ROW_SCHEMA,
  GROUP_SORT_ARG,
  OPERATION_ARG,
  VALUE_FIELD_ARG,
} from './analytics-schemas';
import { DRY_RUN_ARG, runHelper } from './analytics-support';

interface Args {
  class_name: string;
  field: string;
  operation?: GroupOperation;
  value_field?: string;
  where?: Record<string, unknown>;
  sort?: GroupSort;
  limit?: number;
  flatten_arrays?: boolean;
  dry_run?: boolean;
}

/** The path's own group-by speaks these operation names. */
export function pathOperation(op: GroupOperation | undefined): PathGroupOperation {
  return op === 'average' ? 'avg' : (op ?? 'count');
}

export const groupBy = readTool<Args>({
  name: 'group_by',
  description:
    'Group the objects of a class by one field and count them (or sum/avg/min/max a value_field per group). Returns groups [{ key, value }], largest first by default; pointer keys come back as objectIds with pointer_class.',
  category: 'aggregate',
  permission: 'readonly',
  dataOperation: 'group_by',
  timeout: 60,
  annotations: READ_ONLY_TOOL,
  inputSchema: {
    type: 'object',
    properties: {
      class_name: CLASS_NAME_ARG,
      field: FIELD_ARG,
      operation: OPERATION_ARG,
      value_field: VALUE_FIELD_ARG,
      where: WHERE_ARG,
      sort: { ...GROUP_SORT_ARG, description: 'Group order (default value_desc).' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: GROUP_BY_MAX_LIMIT,
        description: `Groups to return (default ${GROUP_BY_DEFAULT_LIMIT}, max ${GROUP_BY_MAX_LIMIT}).`,
      },
      flatten_arrays: {
        type: 'boolean',
        description: 'Count each element of an array field as its own group.',
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
      operation: { type: 'string' },
      group_count: { type: 'integer' },
      limit: { type: 'integer' },
      groups: { type: 'array', items: GROUP_ROW_SCHEMA },
      pointer_class: { type: 'string' },
      truncated: { type: 'boolean' },
      ...DRY_RUN_PROPERTIES,
    },
    required: ['class_name'],
  },
  handler: async (args, { read }) => {
    const className = args.class_name;
    await read.gate(className);
    const limit = resolveLimit(args.limit, GROUP_BY_DEFAULT_LIMIT, GROUP_BY_MAX_LIMIT);
    const pipeline = buildGroupByPipeline({
      field: args.field,
      where: args.where,
      operation: args.operation,
      valueField: args.value_field,
      limit,
      sort: args.sort,
      flattenArrays: args.flatten_arrays,
    });
    const simple = !args.flatten_arrays && (args.sort ?? 'value_desc') === 'value_desc';
    const result = await runHelper(read, 'group_by', className, {
      pipeline,
      where: args.where,
      native: simple
        ? {
            groupBy: {
              field: args.field,
              operation: pathOperation(args.operation),
              valueField: args.value_field,
              limit,
            },
          }
        : undefined,
      pointerField: args.field,
      dryRun: args.dry_run,
      parameters: {
        field: args.field,
        operation: args.operation ?? 'count',
        value_field: args.value_field,
        sort: args.sort ?? 'value_desc',
        limit,
        flatten_arrays: args.flatten_arrays,
      },
    });
    if ('dryRun' in result) return result.dryRun;
    return shapeGroupByResult({
      className,
      field: args.field,
      operation: args.operation ?? 'count',
      limit,
      rows: result.rows as GroupRow[],
      pointerClass: result.pointerClass,
    });
  },
});
