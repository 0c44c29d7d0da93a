import { simplifyRow } from './simplify-object';
import { renderTabular, TabularFormat } from './tabular';
import { truncatedIncludePayload } from './truncated-include-fields';

/** Rows shown in a json `query_class` result; more would crowd the model's context. */
export const MAX_RESULTS_DISPLAY = 50;

export type QueryResultFormat = 'json' | TabularFormat;

export interface QueryResultInput {
  className: string;
  /** Rows as fetched (already redacted), before simplification. */
  results: Array<Record<string, unknown>>;
  limit: number;
  skip: number;
  format?: QueryResultFormat;
  /** Built by the caller (see `buildNextCall`); shown only when more rows may exist. */
  nextCall?: NextCall;
  /** Pointer name -> fields left out by auto-projection of that include. */
  truncatedIncludeFields?: Record<string, string[]>;
}

/** A ready-to-send follow-up call; a type alias so it stays assignable to plain records. */
export type NextCall = { tool: 'query_class'; arguments: Record<string, unknown> };

export interface NextCallArgs {
  className: string;
  limit: number;
  skip: number;
  where?: Record<string, unknown> | null;
  keys?: string[] | null;
  order?: string | null;
  include?: string[] | null;
}

/** The `data` of a `query_class` result, json or tabular. */
export function formatQueryResult(input: QueryResultInput): Record<string, unknown> {
  const { className, results, limit, skip, format = 'json' } = input;
  if (format !== 'json') {
    const { headers, output } = renderTabular(results.map(simplifyRow), format);
    return { class_name: className, format, headers, row_count: results.length, output };
  }

  const total = results.length;
  const truncated = total > MAX_RESULTS_DISPLAY;
  // A full page means the server may hold more; rows fetched but not shown are "more" too, and the
  // next call resumes right after the last row shown so none is skipped.
  const hasMore = (limit > 0 && total >= limit) || truncated;
  const data: Record<string, unknown> = {
    class_name: className,
    result_count: total,
    pagination: { limit, skip, has_more: hasMore },
    truncated,
  };
  if (truncated) {
    data.truncated_note =
      `Only the first ${MAX_RESULTS_DISPLAY} of ${total} results are included; ` +
      `repeat the query with skip: ${skip + MAX_RESULTS_DISPLAY} to read the rest.`;
  }
  const includeFields = truncatedIncludePayload(input.truncatedIncludeFields);
  if (includeFields) data.truncated_include_fields = includeFields;
  if (hasMore && input.nextCall) {
    data.next_call = truncated
      ? {
          ...input.nextCall,
          arguments: { ...input.nextCall.arguments, skip: skip + MAX_RESULTS_DISPLAY },
        }
      : input.nextCall;
  }
  data.results = results.slice(0, MAX_RESULTS_DISPLAY).map(simplifyRow);
  return data;
}

/**
 * The next page of the same query, echoing the caller's own arguments so the model does not have
 * to carry them across turns. Absent or empty optional arguments are left out.
 */
export function buildNextCall(args: NextCallArgs): NextCall {
  const next: Record<string, unknown> = {
    class_name: args.className,
    limit: args.limit,
    skip: args.skip + args.limit,
  };
  // Copies, so later changes to the caller's objects cannot alter the hint.
  if (args.where && Object.keys(args.where).length > 0) next.where = structuredClone(args.where);
  if (args.keys && args.keys.length > 0) next.keys = [...args.keys];
  if (args.order) next.order = args.order;
  if (args.include && args.include.length > 0) next.include = [...args.include];
  return { tool: 'query_class', arguments: next };
}
