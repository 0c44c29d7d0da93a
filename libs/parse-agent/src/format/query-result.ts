import { withJsonText } from './serialized-json';
import { simplifyRow } from './simplify-object';
import { cellText, renderTabular, TabularFormat } from './tabular';
import { truncatedIncludePayload } from './truncated-include-fields';
import { withheldIncludesPayload } from './withheld-includes';

/**
 * Bytes of rows one `query_class` result carries by default, in every format (about 8k tokens):
 * enough for a useful page, small enough that one call cannot flood the model's context. Rows past
 * it are not lost: the result says has_more and next_call resumes right after the last row shown.
 */
export const DEFAULT_RESULT_BUDGET_BYTES = 32 * 1024;

export type QueryResultFormat = 'json' | TabularFormat;

export interface QueryResultInput {
  className: string;
  /** Rows as fetched (already redacted). */
  results: Array<Record<string, unknown>>;
  /** The rows are already in display form (simplified during redaction); skip that pass. */
  simplified?: boolean;
  limit: number;
  skip: number;
  format?: QueryResultFormat;
  /** Built by the caller (see `buildNextCall`); shown only when more rows may exist. */
  nextCall?: NextCall;
  /** Pointer name -> fields left out by auto-projection of that include. */
  truncatedIncludeFields?: Record<string, string[]>;
  /** Large fields (`@AgentLargeFields`) left out because the caller did not ask for them. */
  elidedFields?: string[];
  /** Requested fields the rows came back without, and why (never their values). */
  withheldFields?: Record<string, string>;
  /** Include path -> objects left as bare pointers (the agent's read of their class omits them). */
  withheldIncludes?: Record<string, number>;
  /** Row bytes per result (default DEFAULT_RESULT_BUDGET_BYTES). */
  budgetBytes?: number;
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
  format?: string | null;
  applyCanonicalFilter?: boolean | null;
}

/** What the withheld reasons mean, said once per result that has any. */
export const WITHHELD_NOTE =
  "protected: Parse's protectedFields hides the field from this user; not_allowlisted: outside the class's agent_fields. Values are never shown.";

/**
 * The `data` of a `query_class` result, json or tabular. Both formats page the same way: rows are
 * shown up to the byte budget, `pagination.has_more` says whether more exist, and `next_call`
 * (skip = skip + rows shown) reads on without skipping or repeating a row.
 */
export function formatQueryResult(input: QueryResultInput): Record<string, unknown> {
  const { className, limit, skip, format = 'json' } = input;
  const rows = input.simplified ? input.results : input.results.map(simplifyRow);
  const budget = input.budgetBytes ?? DEFAULT_RESULT_BUDGET_BYTES;
  const fetched = rows.length;
  // json: each row is serialized once; that text both measures the budget and becomes the result.
  let rowsJson: string | undefined;
  let rowsBytes = 0;
  let shown: number;
  if (format === 'json')
    ({ shown, json: rowsJson, bytes: rowsBytes } = jsonRowsWithin(rows, budget));
  else shown = tabularRowsWithin(rows, budget);
  const truncated = shown < fetched;
  // A full page means the server may hold more; rows fetched but not shown are "more" too.
  const hasMore = (limit > 0 && fetched >= limit) || truncated;
  const page = truncated ? rows.slice(0, shown) : rows;

  const data: Record<string, unknown> = { class_name: className };
  let tabular: { headers: string[]; output: string } | undefined;
  if (format === 'json') {
    data.result_count = shown;
  } else {
    tabular = renderTabular(page, format);
    data.format = format;
    data.headers = tabular.headers;
    data.row_count = shown;
  }
  data.pagination = { limit, skip, has_more: hasMore };
  data.truncated = truncated;
  if (truncated) {
    data.truncated_note =
      `${shown} of ${fetched} fetched rows fit this result's ${budget}-byte budget; ` +
      `next_call continues at skip ${skip + shown}. Ask for fewer fields with keys to get more rows per call.`;
  }
  if (input.elidedFields?.length) {
    data.elided_fields = [...input.elidedFields];
    data.elided_note = `Large fields left out; name them in keys to read them (or get_object for one row).`;
  }
  if (input.withheldFields && Object.keys(input.withheldFields).length > 0) {
    data.withheld_fields = { ...input.withheldFields };
    data.withheld_note = WITHHELD_NOTE;
  }
  const includeFields = truncatedIncludePayload(input.truncatedIncludeFields);
  if (includeFields) data.truncated_include_fields = includeFields;
  Object.assign(data, withheldIncludesPayload(input.withheldIncludes));
  if (hasMore && input.nextCall) {
    data.next_call = truncated
      ? { ...input.nextCall, arguments: { ...input.nextCall.arguments, skip: skip + shown } }
      : input.nextCall;
  }
  if (tabular) {
    data.output = tabular.output;
    return data;
  }
  data.results = page;
  if (rowsJson === undefined) return data;
  // The envelope is small; the rows' text is spliced in rather than serialized a second time.
  const { results: _rows, ...envelope } = data;
  const envelopeJson = JSON.stringify(envelope);
  const head = `${envelopeJson.slice(0, -1)}${envelopeJson.length > 2 ? ',' : ''}"results":`;
  // The rows were measured while they were serialized; only the small envelope is measured here.
  return withJsonText(data, `${head}${rowsJson}}`, utf8Length(head) + rowsBytes + 1);
}

/**
 * Leading rows whose compact JSON fits the budget (at least one, so paging always advances), and
 * that JSON, built from the per-row texts the measuring produced.
 */
function jsonRowsWithin(
  rows: ReadonlyArray<Record<string, unknown>>,
  budget: number,
): { shown: number; json: string; bytes: number } {
  // Joined once at the end: one flat string, where appending row by row would leave a rope of
  // every row's text that the result (and anything holding it) keeps alive.
  const texts: string[] = [];
  let used = 1; // the opening bracket; each row adds its separator or the closing bracket
  for (const row of rows) {
    const text = JSON.stringify(row);
    const next = used + utf8Length(text) + 1;
    if (next > budget && texts.length > 0) break;
    used = next;
    texts.push(text);
  }
  const shown = texts.length;
  // No row: the brackets alone.
  return { shown, json: `[${texts.join(',')}]`, bytes: shown === 0 ? 2 : used };
}

/** Leading rows whose rendered cells fit the budget (separators counted approximately). */
function tabularRowsWithin(rows: ReadonlyArray<Record<string, unknown>>, budget: number): number {
  if (rows.length === 0) return 0;
  const columns = Object.keys(rows[0]);
  let used = columns.reduce((sum, c) => sum + c.length + 3, 0);
  for (let i = 0; i < rows.length; i++) {
    for (const column of columns) used += utf8Length(cellText(rows[i][column])) + 3;
    if (used > budget) return Math.max(1, i);
  }
  return rows.length;
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
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
  if (args.format && args.format !== 'json') next.format = args.format;
  if (args.applyCanonicalFilter === false) next.apply_canonical_filter = false;
  return { tool: 'query_class', arguments: next };
}
