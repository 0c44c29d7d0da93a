import {
  buildGroupByPipeline,
  shapeGroupByResult,
  type GroupRow,
} from '../../../security/pipeline/group-by-pipeline';
import { readTool } from '../../read/read-tool';
import {
  FIELD_ARG,
  flattenArraysArg,
  groupArguments,
  groupResult,
  helperArguments,
} from './analytics-schemas';
import { gatedLimit, groupCall, runHelper } from './analytics-support';

export const groupBy = readTool({
  name: 'group_by',
  description:
    'Group the objects of a class by one field and count them (or sum/avg/min/max a value_field per group). Returns groups [{ key, value }], largest first by default; pointer keys come back as objectIds with pointer_class.',
  category: 'aggregate',
  dataOperation: 'group_by',
  timeout: 60,
  oversize: 'trim-rows',
  inputSchema: helperArguments(
    FIELD_ARG,
    groupArguments('Group order (default value_desc).', 'Groups', {
      flatten_arrays: flattenArraysArg('Count each element of an array field as its own group.'),
    }),
  ),
  outputSchema: groupResult({
    operation: { type: 'string' },
    value_field: { type: 'string' },
    group_count: { type: 'integer' },
    limit: { type: 'integer' },
    pointer_class: { type: 'string' },
  }),
  handler: async (args, { read }) => {
    const className = args.class_name;
    const limit = await gatedLimit(read, className, args.limit);
    const call = groupCall(args, limit, 'value_desc');
    const simple = !args.flatten_arrays && (args.sort ?? 'value_desc') === 'value_desc';
    const result = await runHelper(read, 'group_by', className, {
      pipeline: buildGroupByPipeline({ ...call.pipeline, flattenArrays: args.flatten_arrays }),
      where: args.where,
      native: simple ? { groupBy: call.native } : undefined,
      pointerField: args.field,
      dryRun: args.dry_run,
      applyCanonicalFilter: args.apply_canonical_filter,
      parameters: { field: args.field, ...call.parameters, flatten_arrays: args.flatten_arrays },
    });
    if ('dryRun' in result) return result.dryRun;
    const shaped = shapeGroupByResult({
      className,
      field: args.field,
      operation: call.echo.operation,
      limit,
      rows: result.rows as GroupRow[],
      pointerClass: result.pointerClass,
    });
    return { ...shaped, ...call.echo };
  },
});
