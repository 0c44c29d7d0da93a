import { DEFAULT_LIMIT, MAX_LIMIT } from '../../../core/constants';
import { AgentValidationError } from '../../../core/errors';
import { clampLimit } from '../../../format/applied-limits';
import { buildNextCall, formatQueryResult } from '../../../format/query-result';
import type { ToolDefinition } from '../../tool-definition';
import { READ_ONLY_TOOL } from '../tool-annotations';
import {
  APPLY_CANONICAL_FILTER_ARG,
  CLASS_NAME_ARG,
  INCLUDE_ARG,
  KEYS_ARG,
  WHERE_ARG,
} from '../tool-schemas';

export interface QueryClassArgs {
  class_name: string;
  where?: Record<string, unknown>;
  limit?: number;
  skip?: number;
  order?: string;
  keys?: string[];
  include?: string[];
  apply_canonical_filter?: boolean;
  format?: string;
}

const FORMATS = ['json', 'csv', 'markdown', 'table'] as const;
type Format = (typeof FORMATS)[number];

export const queryClass: ToolDefinition<QueryClassArgs> = {
  name: 'query_class',
  description: `Find objects of a class with Parse constraints. Default limit ${DEFAULT_LIMIT}, max ${MAX_LIMIT}; page with skip (next_call gives the next page). Output as json, csv, markdown or table.`,
  category: 'query',
  permission: 'readonly',
  timeout: 30,
  oversize: 'trim-rows',
  annotations: READ_ONLY_TOOL,
  inputSchema: {
    type: 'object',
    properties: {
      class_name: CLASS_NAME_ARG,
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
    },
    required: ['class_name'],
  },
  handler: async (args, { access, data, signal }) => {
    await access.requireReadableClass(args.class_name);
    const format = (args.format ?? 'json').toLowerCase() as Format;
    if (!FORMATS.includes(format)) {
      throw new AgentValidationError(
        `format: must be one of [${FORMATS.join(' ')}], got '${args.format}'.`,
      );
    }
    const { value: limit, applied } = clampLimit('limit', args.limit, DEFAULT_LIMIT, MAX_LIMIT);
    const skip = args.skip ?? 0;
    const order = access.checkOrder(args.class_name, args.order);
    const plan = await access.planRead(args.class_name, {
      where: args.where,
      keys: args.keys,
      include: args.include,
      applyCanonicalFilter: args.apply_canonical_filter,
    });
    const rows = await data.find(
      args.class_name,
      { where: plan.where, keys: plan.keys, include: plan.include, order, limit, skip },
      signal,
    );
    const results = access.redactRows(rows, args.class_name);
    const result = formatQueryResult({
      className: args.class_name,
      results,
      limit,
      skip,
      format,
      truncatedIncludeFields: plan.truncatedIncludeFields,
      nextCall: buildNextCall({
        className: args.class_name,
        limit,
        skip,
        where: args.where,
        keys: args.keys,
        order: args.order,
        include: args.include,
      }),
    });
    return applied ? { ...result, applied_limits: applied } : result;
  },
};
