import {
  buildDistinctPipeline,
  DISTINCT_DEFAULT_LIMIT,
  DISTINCT_MAX_LIMIT,
  shapeDistinctResult,
} from '../../../security/pipeline/distinct-pipeline';
import { readTool } from '../../read/read-tool';
import { APPLY_CANONICAL_FILTER_ARG, WHERE_ARG } from '../tool-schemas';
import { ANY_JSON_VALUE } from '../output-schemas';
import {
  FIELD_ARG,
  flattenArraysArg,
  helperArguments,
  helperResult,
  limitArg,
} from './analytics-schemas';
import { canonicalEcho, gatedLimit, runHelper, type LimitRange } from './analytics-support';

const DISTINCT_LIMITS: LimitRange = { default: DISTINCT_DEFAULT_LIMIT, max: DISTINCT_MAX_LIMIT };

export const distinct = readTool({
  name: 'distinct',
  description:
    'List the distinct values of one field of a class (optionally filtered). Pointer values come back as objectIds with pointer_class.',
  category: 'aggregate',
  dataOperation: 'distinct',
  timeout: 30,
  oversize: 'trim-rows',
  inputSchema: helperArguments(FIELD_ARG, {
    where: WHERE_ARG,
    sort: { type: 'string', enum: ['asc', 'desc'], description: 'Sort the values.' },
    limit: limitArg('Values', DISTINCT_LIMITS.default, DISTINCT_LIMITS.max),
    flatten_arrays: flattenArraysArg('List each element of an array field as its own value.'),
    apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
  }),
  outputSchema: helperResult({
    count: { type: 'integer' },
    values: { type: 'array', items: ANY_JSON_VALUE },
    pointer_class: { type: 'string' },
  }),
  handler: async (args, { read }) => {
    const className = args.class_name;
    const limit = await gatedLimit(read, className, args.limit, DISTINCT_LIMITS);
    const { field, sort, flatten_arrays: flattenArrays } = args;
    // A path's own distinct lists an array's elements (as Parse and MongoDB do); whole arrays, the
    // default here, need the pipeline.
    const wholeArrays =
      !flattenArrays && (await read.access.fieldTypes(className))[field]?.type === 'Array';
    const result = await runHelper(read, 'distinct', className, {
      pipeline: buildDistinctPipeline({ field, where: args.where, sort, limit, flattenArrays }),
      where: args.where,
      // Flattening arrays is the pipeline's: a path that runs pipelines gets one.
      native: {
        distinct: { field, limit },
        sort,
        pipelineWhenPossible: flattenArrays || wholeArrays,
        pipelineOnly: wholeArrays
          ? `'${field}' is an Array field: distinct lists whole arrays unless flatten_arrays is true, and this deployment can only list their elements. Pass flatten_arrays: true.`
          : undefined,
      },
      pointerField: field,
      dryRun: args.dry_run,
      applyCanonicalFilter: args.apply_canonical_filter,
      parameters: {
        field,
        sort,
        limit,
        flatten_arrays: flattenArrays,
        ...canonicalEcho(args.apply_canonical_filter),
      },
    });
    if ('dryRun' in result) return result.dryRun;
    const { rows, pointerClass } = result;
    return {
      ...shapeDistinctResult({ className, field, limit, rows, pointerClass }),
      ...canonicalEcho(args.apply_canonical_filter),
    };
  },
});
