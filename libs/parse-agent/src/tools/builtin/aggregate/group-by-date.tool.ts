import type { GroupByDateSpec } from '../../../ports/data-path';
import {
  buildGroupByDatePipeline,
  DATE_INTERVALS,
  shapeGroupByDateResult,
} from '../../../security/pipeline/group-by-date-pipeline';
import type { GroupRow } from '../../../security/pipeline/group-by-pipeline';
import { readTool } from '../../read/read-tool';
import { FIELD_ARG, groupArguments, groupResult, helperArguments } from './analytics-schemas';
import { gatedLimit, groupCall, runHelper } from './analytics-support';

/** Intervals a path's own date grouping accepts; finer ones always go through a pipeline. */
const PATH_INTERVALS: ReadonlySet<string> = new Set([
  'hour',
  'day',
  'week',
  'month',
  'quarter',
  'year',
]);

export const groupByDate = readTool({
  name: 'group_by_date',
  description:
    'Bucket the objects of a class by a date field (year, quarter, month, week, day, hour, minute, second) in a time zone, counting them or summing/averaging a value_field per bucket. Keys are readable dates such as "2024-11", "2024-W48", "2024-11-25".',
  category: 'aggregate',
  dataOperation: 'group_by_date',
  timeout: 60,
  oversize: 'trim-rows',
  inputSchema: helperArguments(
    { ...FIELD_ARG, description: 'The date field, e.g. "createdAt".' },
    {
      interval: { type: 'string', enum: [...DATE_INTERVALS] },
      timezone: {
        type: 'string',
        description: 'IANA name ("America/New_York") or offset ("+05:30"); default UTC.',
      },
      ...groupArguments('Bucket order (default key_asc, chronological).', 'Buckets'),
    },
    ['interval'],
  ),
  outputSchema: groupResult({
    interval: { type: 'string' },
    operation: { type: 'string' },
    value_field: { type: 'string' },
    timezone: { type: 'string' },
    sort: { type: 'string' },
  }),
  handler: async (args, { read }) => {
    const className = args.class_name;
    const limit = await gatedLimit(read, className, args.limit);
    const timezone = args.timezone ?? 'UTC';
    const call = groupCall(args, limit, 'key_asc');
    const { interval } = args;
    const simple = PATH_INTERVALS.has(interval) && (args.sort ?? 'key_asc') === 'key_asc';
    const result = await runHelper(read, 'group_by_date', className, {
      pipeline: buildGroupByDatePipeline({ ...call.pipeline, interval, timezone: args.timezone }),
      where: args.where,
      native: simple
        ? {
            groupByDate: {
              ...call.native,
              interval: interval as GroupByDateSpec['interval'],
              timezone,
            },
          }
        : undefined,
      dryRun: args.dry_run,
      applyCanonicalFilter: args.apply_canonical_filter,
      parameters: { field: args.field, interval, timezone, ...call.parameters },
    });
    if ('dryRun' in result) return result.dryRun;
    const shaped = shapeGroupByDateResult({
      className,
      field: args.field,
      interval: args.interval,
      operation: call.echo.operation,
      timezone,
      sort: args.sort,
      limit,
      rows: result.rows as GroupRow[],
    });
    return { ...shaped, ...call.echo };
  },
});
