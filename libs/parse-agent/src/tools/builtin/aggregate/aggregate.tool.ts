import { AgentValidationError } from '../../../core/errors';
import { autoLimitNotice } from '../../../security/pipeline/auto-limit';
import { compactPointers } from '../../../security/pipeline/pointer-compaction';
import type { ReadPolicy } from '../../../security/read-policy';
import { readTool } from '../../read/read-tool';
import { APPLY_CANONICAL_FILTER_ARG, classArguments, classResult } from '../tool-schemas';
import { leadingMatch, withheldNote } from './analytics-support';

interface Args {
  class_name: string;
  pipeline: unknown[];
  compact_pointers?: boolean;
  apply_canonical_filter?: boolean;
}

export const PIPELINE_ARG = {
  type: 'array',
  items: { type: 'object' },
  description:
    'MongoDB aggregation stages in API field names, e.g. [{"$match": {"status": "paid"}}, {"$group": {"_id": "$customer", "total": {"$sum": "$amount"}}}, {"$sort": {"total": -1}}, {"$limit": 10}]. $lookup/$unionWith take class names. Without a final $limit or $count, {"$limit": 200} is appended.',
};

export const aggregate = readTool<Args>({
  name: 'aggregate',
  description:
    "Run an aggregation pipeline on a class ($match, $group, $sort, $project, $lookup, $facet, $bucket...). Code-running and writing stages are refused; the agent's scopes are applied to every class the pipeline reads. For simple counts per value prefer group_by, group_by_date or distinct.",
  category: 'aggregate',
  dataOperation: 'aggregate',
  timeout: 60,
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
      const compacted = compactPointers(results);
      results = compacted.rows;
      pointerClasses = {
        ...compacted.pointerClasses,
        ...(await viewPointers(access, className, results)),
      };
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
 * Direct paths already present pointers as bare objectIds under their API names; name the class of
 * each root-class pointer column that still holds ids, so the envelope reads the same on every path.
 */
async function viewPointers(
  access: ReadPolicy,
  className: string,
  rows: Record<string, unknown>[],
): Promise<Record<string, string>> {
  if (!rows.length) return {};
  const types = await access.fieldTypes(className);
  const out: Record<string, string> = {};
  for (const [field, type] of Object.entries(types)) {
    if (type.type !== 'Pointer' || !type.targetClass) continue;
    const values = rows.map((r) => r[field]).filter((v) => v !== undefined && v !== null);
    if (values.length && values.every((v) => typeof v === 'string' && !v.includes('$'))) {
      out[field] = type.targetClass;
    }
  }
  return out;
}
