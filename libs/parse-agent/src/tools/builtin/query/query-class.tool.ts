import { DEFAULT_LIMIT, MAX_LIMIT } from '../../../core/constants';
import { AgentValidationError } from '../../../core/errors';
import { clampLimit, type AppliedLimit } from '../../../format/applied-limits';
import {
  buildNextCall,
  DEFAULT_RESULT_BUDGET_BYTES,
  formatQueryResult,
} from '../../../format/query-result';
import { simplifyTypedValue } from '../../../format/simplify-object';
import type { PolicedPage } from '../../read/policed-reader';
import { readTool } from '../../read/read-tool';
import type { ArgumentsOf } from '../../schema-types';
import type { ReadPolicy } from '../../../security/read-policy';
import {
  APPLY_CANONICAL_FILTER_ARG,
  classArguments,
  INCLUDE_ARG,
  KEYS_ARG,
  WHERE_ARG,
} from '../tool-schemas';
import { QUERY_CLASS_OUTPUT } from '../output-schemas';

const QUERY_CLASS_INPUT = classArguments({
  where: WHERE_ARG,
  limit: {
    type: 'integer',
    minimum: 1,
    description: `Rows to return (default ${DEFAULT_LIMIT}, max ${MAX_LIMIT}).`,
  },
  skip: { type: 'integer', minimum: 0, description: 'Rows to skip, for paging.' },
  order: {
    type: 'string',
    description: 'Sort fields, comma-separated; prefix - for descending, e.g. "-createdAt".',
  },
  keys: KEYS_ARG,
  include: INCLUDE_ARG,
  apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
  format: { type: 'string', description: 'json (default), csv, markdown or table.' },
});

/** query_class's arguments, as its schema declares them. */
type QueryClassArgs = ArgumentsOf<typeof QUERY_CLASS_INPUT>;

const FORMATS = ['json', 'csv', 'markdown', 'table'] as const;
type Format = (typeof FORMATS)[number];

export const queryClass = readTool({
  name: 'query_class',
  description: `Find objects of a class with Parse constraints. Default limit ${DEFAULT_LIMIT}, max ${MAX_LIMIT}; each result holds about ${DEFAULT_RESULT_BUDGET_BYTES / 1024} KB of rows in any format: when pagination.has_more is true, next_call is the call for the next page. Large fields are left out unless named in keys. Output as json, csv, markdown or table.`,
  category: 'query',
  timeout: 30,
  oversize: 'trim-rows',
  outputSchema: QUERY_CLASS_OUTPUT,
  inputSchema: QUERY_CLASS_INPUT,
  handler: async (args, { access, read }) => {
    await read.gate(args.class_name);
    const format = (args.format ?? 'json').toLowerCase() as Format;
    if (!FORMATS.includes(format)) {
      throw new AgentValidationError(
        `format: must be one of [${FORMATS.join(' ')}], got '${args.format}'.`,
      );
    }
    const { value: limit, applied } = clampLimit('limit', args.limit, DEFAULT_LIMIT, MAX_LIMIT);
    const skip = args.skip ?? 0;
    // Redaction, allowlists and display simplification in one walk over the rows.
    const page = await read.find(
      args.class_name,
      {
        where: args.where,
        keys: args.keys,
        include: args.include,
        order: args.order,
        applyCanonicalFilter: args.apply_canonical_filter,
        elideLargeFields: true,
        limit,
        skip,
      },
      { simplifyTyped: simplifyTypedValue },
    );
    // Formatted in a call of its own: this frame, which waited for Parse and so is already old
    // under load, never holds the rows across the await below (see data/handed-over-rows.ts).
    return formatPage(args, page, access, { limit, skip, format, applied });
  },
});

async function formatPage(
  args: QueryClassArgs,
  { rows: results, plan, withheldIncludes }: PolicedPage,
  access: ReadPolicy,
  page: { limit: number; skip: number; format: Format; applied?: Record<string, AppliedLimit> },
): Promise<Record<string, unknown>> {
  const { limit, skip, format, applied } = page;
  const result = formatQueryResult({
    className: args.class_name,
    results,
    simplified: true,
    limit,
    skip,
    format,
    truncatedIncludeFields: plan.truncatedIncludeFields,
    withheldIncludes,
    elidedFields: plan.elidedFields,
    withheldFields: await access.withheldFields(args.class_name, plan, results),
    nextCall: buildNextCall({
      className: args.class_name,
      limit,
      skip,
      where: args.where,
      keys: args.keys,
      order: args.order,
      include: args.include,
      format,
      applyCanonicalFilter: args.apply_canonical_filter,
    }),
  });
  return applied ? { ...result, applied_limits: applied } : result;
}
