import { AgentValidationError } from '../../../core/errors';
import { autoLimitNotice } from '../../../security/pipeline/auto-limit';
import {
  compactPointers,
  type ColumnPointerClass,
} from '../../../security/pipeline/pointer-compaction';
import type { ReadPolicy } from '../../../security/read-policy';
import type { PreparedPipeline } from '../../read/policed-reader';
import { readTool } from '../../read/read-tool';
import { TRUNCATED_OUTPUT } from '../output-schemas';
import { APPLY_CANONICAL_FILTER_ARG, classArguments, classResult } from '../tool-schemas';
import { leadingMatch, withheldNote } from './analytics-support';

export const PIPELINE_ARG = {
  type: 'array',
  items: { type: 'object' },
  description:
    'MongoDB aggregation stages in API field names, e.g. [{"$match": {"status": "paid"}}, {"$group": {"_id": "$customer", "total": {"$sum": "$amount"}}}, {"$sort": {"total": -1}}, {"$limit": 10}]. $lookup/$unionWith take class names. Without a final $limit or $count, {"$limit": 200} is appended.',
} as const;

export const aggregate = readTool({
  name: 'aggregate',
  description:
    "Run an aggregation pipeline on a class ($match, $group, $sort, $project, $lookup, $facet, $bucket...). Code-running and writing stages are refused; the agent's scopes are applied to every class the pipeline reads. For simple counts per value prefer group_by, group_by_date or distinct.",
  category: 'aggregate',
  dataOperation: 'aggregate',
  timeout: 60,
  oversize: 'trim-rows',
  inputSchema: classArguments(
    {
      pipeline: PIPELINE_ARG,
      apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
      compact_pointers: {
        type: 'boolean',
        description:
          'Default true: pointer columns come back as bare objectIds with their class in pointer_classes.',
      },
    },
    ['pipeline'],
  ),
  outputSchema: classResult(
    {
      pipeline_stages: { type: 'integer' },
      result_count: { type: 'integer' },
      results: { type: 'array', items: { type: 'object' } },
      pointer_classes: { type: 'object', additionalProperties: { type: 'string' } },
      auto_limited: { type: 'boolean' },
      auto_limit: { type: 'integer' },
      hint: { type: 'string' },
      withheld_fields: { type: 'object', additionalProperties: { type: 'string' } },
      withheld_note: { type: 'string' },
      apply_canonical_filter: { type: 'boolean' },
      _truncated: TRUNCATED_OUTPUT,
    },
    ['result_count', 'results'],
  ),
  handler: async (args, { access, read }) => {
    const className = args.class_name;
    if (Array.isArray(args.pipeline) && args.pipeline.length === 0) {
      await read.gate(className);
      throw new AgentValidationError(
        'pipeline is empty: it would return the rows of the class unfiltered. Give at least one stage, e.g. [{"$match": {"status": "paid"}}, {"$limit": 10}] or [{"$group": {"_id": "$status", "n": {"$sum": 1}}}].',
      );
    }
    const prepared = await read.prepare('aggregate', className, args.pipeline, {
      applyCanonicalFilter: args.apply_canonical_filter,
    });
    let results = await prepared.run({ where: leadingMatch(args.pipeline) });
    let pointerClasses: Record<string, string> = {};
    if (args.compact_pointers !== false) {
      const compacted = compactPointers(results, await pointerColumns(access, className, prepared));
      results = compacted.rows;
      pointerClasses = compacted.pointerClasses;
    }
    return {
      class_name: className,
      pipeline_stages: args.pipeline.length,
      result_count: results.length,
      results,
      ...(Object.keys(pointerClasses).length ? { pointer_classes: pointerClasses } : {}),
      ...autoLimitNotice(prepared.autoLimited, prepared.autoLimit, results.length),
      ...withheldNote(access, className, prepared.withheld),
      ...(args.apply_canonical_filter === false ? { apply_canonical_filter: false } : {}),
    };
  },
});

/**
 * The class of an output column that copies one of the class's pointer columns unchanged (the
 * direct MongoDB path presents pointers as bare objectIds, so only the pipeline's lineage tells
 * them from strings). A pointer into a class the agent may not see is never named.
 */
async function pointerColumns(
  access: ReadPolicy,
  className: string,
  prepared: PreparedPipeline,
): Promise<ColumnPointerClass> {
  const types = await access.fieldTypes(className);
  return (column) => {
    const origin = prepared.columnOrigin(column);
    const type = origin === undefined ? undefined : types[origin];
    if (type?.type !== 'Pointer' || !type.targetClass || access.isDenied(type.targetClass)) {
      return undefined;
    }
    return type.targetClass;
  };
}
