import type { GroupByDateSpec } from '../../../ports/data-path';
import {
  buildGroupByDatePipeline,
  DATE_INTERVALS,
  shapeGroupByDateResult,
  type DateInterval,
} from '../../../security/pipeline/group-by-date-pipeline';
import {
  GROUP_BY_DEFAULT_LIMIT,
  GROUP_BY_MAX_LIMIT,
  resolveLimit,
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
import { pathOperation } from './group-by.tool';

interface Args {
  class_name: string;
  field: string;
  interval: DateInterval;
  timezone?: string;
  operation?: GroupOperation;
  value_field?: string;
  where?: Record<string, unknown>;
  sort?: GroupSort;
  limit?: number;
  dry_run?: boolean;
}

/** Intervals a path's own date grouping accepts; finer ones always go through a pipeline. */
const PATH_INTERVALS: ReadonlySet<string> = new Set([
  'hour',
  'day',
  'week',
  'month',
  'quarter',
  'year',
]);

export const groupByDate = readTool<Args>({
  name: 'group_by_date',
  description:
    'Bucket the objects of a class by a date field (year, quarter, month, week, day, hour, minute, second) in a time zone, counting them or summing/averaging a value_field per bucket. Keys are readable dates such as "2024-11", "2024-W48", "2024-11-25".',
  category: 'aggregate',
  permission: 'readonly',
  dataOperation: 'group_by_date',
  timeout: 60,
  annotations: READ_ONLY_TOOL,
  inputSchema: {
    type: 'object',
    properties: {
      class_name: CLASS_NAME_ARG,
      field: { ...FIELD_ARG, description: 'The date field, e.g. "createdAt".' },
      interval: { type: 'string', enum: [...DATE_INTERVALS] },
      timezone: {
        type: 'string',
        description: 'IANA name ("America/New_York") or offset ("+05:30"); default UTC.',
      },
      operation: OPERATION_ARG,
      value_field: VALUE_FIELD_ARG,
      where: WHERE_ARG,
      sort: { ...GROUP_SORT_ARG, description: 'Bucket order (default key_asc, chronological).' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: GROUP_BY_MAX_LIMIT,
        description: `Buckets to return (default ${GROUP_BY_DEFAULT_LIMIT}, max ${GROUP_BY_MAX_LIMIT}).`,
      },
      dry_run: DRY_RUN_ARG,
    },
    required: ['class_name', 'field', 'interval'],
  },
  outputSchema: {
    type: 'object',
    properties: {
      class_name: { type: 'string' },
      field: { type: 'string' },
      interval: { type: 'string' },
      operation: { type: 'string' },
      timezone: { type: 'string' },
      sort: { type: 'string' },
      groups: { type: 'array', items: GROUP_ROW_SCHEMA },
      truncated: { type: 'boolean' },
      ...DRY_RUN_PROPERTIES,
    },
    required: ['class_name'],
  },
  handler: async (args, { read }) => {
    const className = args.class_name;
    await read.gate(className);
    const limit = resolveLimit(args.limit, GROUP_BY_DEFAULT_LIMIT, GROUP_BY_MAX_LIMIT);
    const pipeline = buildGroupByDatePipeline({
      field: args.field,
      interval: args.interval,
      timezone: args.timezone,
      where: args.where,
      operation: args.operation,
      valueField: args.value_field,
      limit,
      sort: args.sort,
    });
    const timezone = args.timezone ?? 'UTC';
    const simple = PATH_INTERVALS.has(args.interval) && (args.sort ?? 'key_asc') === 'key_asc';
    const result = await runHelper(read, 'group_by_date', className, {
      pipeline,
      where: args.where,
      native: simple
        ? {
            groupByDate: {
              field: args.field,
              operation: pathOperation(args.operation),
              valueField: args.value_field,
              limit,
              interval: args.interval as GroupByDateSpec['interval'],
              timezone,
            },
          }
        : undefined,
      dryRun: args.dry_run,
      parameters: {
        field: args.field,
        interval: args.interval,
        timezone,
        operation: args.operation ?? 'count',
        value_field: args.value_field,
        sort: args.sort ?? 'key_asc',
        limit,
      },
    });
    if ('dryRun' in result) return result.dryRun;
    return shapeGroupByDateResult({
      className,
      field: args.field,
      interval: args.interval,
      operation: args.operation ?? 'count',
      timezone,
      sort: args.sort,
      limit,
      rows: result.rows as GroupRow[],
    });
  },
});
