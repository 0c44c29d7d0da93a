import { ALWAYS_KEEP_FIELDS } from '../../../core/constants';
import { AccessDeniedError, AgentValidationError } from '../../../core/errors';
import { WITHHELD_NOTE } from '../../../format/query-result';
import { simplifyTypedValue } from '../../../format/simplify-object';
import { withheldIncludesPayload } from '../../../format/withheld-includes';
import { renderTabular, TABULAR_FORMATS, type TabularFormat } from '../../../format/tabular';
import { isInternalField } from '../../../query/internal-fields';
import type { PolicedReader } from '../../read/policed-reader';
import { readTool } from '../../read/read-tool';
import {
  APPLY_CANONICAL_FILTER_ARG,
  classArguments,
  classResult,
  INCLUDE_ARG,
  KEYS_ARG,
  WHERE_ARG,
} from '../tool-schemas';
import { leadingMatch, withheldNote } from '../aggregate/analytics-support';
import { PIPELINE_ARG } from '../aggregate/aggregate.tool';

export const DEFAULT_EXPORT_ROW_CAP = 1_000;
export const MAX_EXPORT_ROW_CAP = 10_000;

interface Column {
  field: string;
  header: string;
}

/**
 * `"name"` or `{ "grade": "Year" }` (field -> header); anything else is refused, and so is a column
 * through an internal field: its cells could only ever be empty, which would read as an answer.
 */
export function parseColumns(columns: unknown): Column[] | undefined {
  if (columns === undefined || columns === null) return undefined;
  if (!Array.isArray(columns) || !columns.length) {
    throw new AgentValidationError(
      'columns must be a non-empty array of field names or { "field": "Header" } objects.',
    );
  }
  return columns.map((spec, i) => {
    const column = columnOf(spec, i);
    const internal = column.field.split('.').find((segment) => isInternalField(segment));
    if (internal !== undefined) {
      throw new AccessDeniedError(
        `columns[${i}] ('${column.field}') names '${internal}', an internal Parse field no agent may read. Remove that column.`,
        { kind: 'internal_field', deniedField: internal },
      );
    }
    return column;
  });
}

function columnOf(spec: unknown, i: number): Column {
  if (typeof spec === 'string' && spec) return { field: spec, header: spec };
  if (typeof spec === 'object' && spec !== null && !Array.isArray(spec)) {
    const entries = Object.entries(spec);
    if (entries.length === 1 && typeof entries[0][1] === 'string') {
      return { field: entries[0][0], header: entries[0][1] };
    }
  }
  throw new AgentValidationError(
    `columns[${i}] must be a field name or an object with exactly one { "field": "Header" } entry (got ${JSON.stringify(spec)}).`,
  );
}

/** A dotted path through included pointers and nested objects. */
function valueAt(row: Record<string, unknown>, path: string): unknown {
  let current: unknown = row;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** The columns a query-mode export with `keys` has: each key's top field, then the built-in ones. */
function keyColumns(keys: readonly string[]): string[] {
  const roots = keys.map((k) => String(k).split('.')[0]);
  return [...new Set([...roots, ...ALWAYS_KEEP_FIELDS])];
}

/**
 * How many rows the whole pipeline yields (the same pipeline with a `$count` after it), for
 * `available_rows` when the export was cut at row_cap. Undefined when the count cannot be read.
 */
async function pipelineRowCount(
  read: PolicedReader,
  className: string,
  pipeline: unknown[],
  applyCanonicalFilter: boolean | undefined,
): Promise<number | undefined> {
  const counted = await read.prepare(
    'aggregate',
    className,
    [...pipeline, { $count: 'available_rows' }],
    { applyCanonicalFilter },
  );
  const rows = await counted.run();
  if (rows.length === 0) return 0;
  const n = rows.length === 1 ? rows[0].available_rows : undefined;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

export const exportData = readTool({
  name: 'export_data',
  description: `Export rows of a class as one CSV, Markdown or text table (query mode with where/keys/include/order, or pipeline mode). columns picks and renames fields ({ "subject.name": "Subject" }). Up to row_cap rows (default ${DEFAULT_EXPORT_ROW_CAP}, max ${MAX_EXPORT_ROW_CAP}).`,
  category: 'export',
  timeout: 60,
  inputSchema: classArguments({
    format: {
      type: 'string',
      enum: [...TABULAR_FORMATS],
      description: 'csv (default), markdown or table.',
    },
    columns: {
      type: 'array',
      items: { anyOf: [{ type: 'string' }, { type: 'object' }] },
      description: 'Ordered columns: "field" or { "field.path": "Header" }.',
    },
    where: WHERE_ARG,
    keys: KEYS_ARG,
    include: INCLUDE_ARG,
    order: { type: 'string', description: 'Sort fields, e.g. "-createdAt".' },
    limit: { type: 'integer', minimum: 1, description: 'Rows to read (query mode).' },
    skip: { type: 'integer', minimum: 0 },
    pipeline: {
      ...PIPELINE_ARG,
      description: 'Pipeline mode: an aggregation pipeline (query arguments are then ignored).',
    },
    row_cap: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_EXPORT_ROW_CAP,
      description: `Most rows to emit (default ${DEFAULT_EXPORT_ROW_CAP}, max ${MAX_EXPORT_ROW_CAP}).`,
    },
    apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
  }),
  outputSchema: classResult(
    {
      format: { type: 'string' },
      headers: { type: 'array', items: { type: 'string' } },
      row_count: { type: 'integer' },
      output: { type: 'string' },
      truncated: { type: 'boolean' },
      available_rows: { type: 'integer' },
      row_cap: { type: 'integer' },
      hint: { type: 'string' },
      pagination: { type: 'object' },
      next_call: { type: 'object' },
      elided_fields: { type: 'array', items: { type: 'string' } },
      elided_note: { type: 'string' },
      withheld_fields: { type: 'object' },
      withheld_note: { type: 'string' },
      withheld_includes: { type: 'object', additionalProperties: { type: 'integer' } },
      withheld_includes_note: { type: 'string' },
    },
    ['format', 'headers', 'row_count', 'output', 'pagination'],
  ),
  handler: async (args, { access, read }) => {
    const className = args.class_name;
    await read.gate(className);
    const format = (args.format ?? 'csv').toLowerCase() as TabularFormat;
    if (!TABULAR_FORMATS.includes(format)) {
      throw new AgentValidationError(
        `format must be one of ${TABULAR_FORMATS.join(', ')} (got '${args.format}').`,
      );
    }
    const cap = args.row_cap ?? DEFAULT_EXPORT_ROW_CAP;
    if (!Number.isInteger(cap) || cap < 1 || cap > MAX_EXPORT_ROW_CAP) {
      throw new AgentValidationError(`row_cap must be an integer from 1 to ${MAX_EXPORT_ROW_CAP}.`);
    }
    const columns = parseColumns(args.columns);
    // A credential column would come out empty (redaction drops it): refuse it, as keys does.
    const internal = columns?.find((c) => isInternalField(c.field));
    if (internal) {
      throw new AccessDeniedError(`columns field '${internal.field}' is an internal Parse field.`, {
        kind: 'internal_field',
        deniedField: internal.field,
      });
    }
    let rows: Record<string, unknown>[];
    let available: number | undefined;
    let elidedFields: string[] | undefined;
    let withheldFields: Record<string, string> | undefined;
    let withheldIncludes: Record<string, number> | undefined;
    const display = { simplifyTyped: simplifyTypedValue };
    if (args.pipeline !== undefined) {
      if (Array.isArray(args.pipeline) && args.pipeline.length === 0) {
        throw new AgentValidationError(
          'pipeline is empty: it would export the rows of the class unfiltered. Give at least one stage, e.g. [{"$match": {"status": "paid"}}], or leave pipeline out and export in query mode with where, keys and order.',
        );
      }
      const applyCanonicalFilter = args.apply_canonical_filter;
      // The export cap replaces the aggregate auto-limit: one row more shows truncation.
      const prepared = await read.prepare('aggregate', className, args.pipeline, {
        limits: { autoLimit: cap + 1 },
        applyCanonicalFilter,
      });
      withheldFields = withheldNote(access, className, prepared.withheld)?.withheld_fields;
      rows = await prepared.run({ where: leadingMatch(args.pipeline), display });
      if (rows.length > cap) {
        available = await pipelineRowCount(read, className, args.pipeline, applyCanonicalFilter);
      }
    } else {
      const large = access.meta(className)?.largeFields ?? [];
      const page = await read.find(
        className,
        {
          where: args.where,
          keys: args.keys,
          include: args.include,
          order: args.order,
          applyCanonicalFilter: args.apply_canonical_filter,
          // Large fields only when a column names them (keys already opt in).
          elideLargeFields: !columns?.some((c) => large.includes(c.field.split('.')[0])),
          limit: Math.min(args.limit ?? cap + 1, cap + 1),
          skip: args.skip,
        },
        display,
      );
      rows = page.rows;
      elidedFields = page.plan.elidedFields;
      withheldFields = await access.withheldFields(className, page.plan, rows);
      withheldIncludes = page.withheldIncludes;
      if (rows.length > cap) available = await page.count();
    }
    const truncated = rows.length > cap;
    const emitted = rows.slice(0, cap);
    const table = columns
      ? emitted.map((row) =>
          Object.fromEntries(columns.map((c) => [c.header, valueAt(row, c.field)])),
        )
      : emitted;
    // Known columns are the header line even when no row came back (CSV needs one).
    const known = columns
      ? columns.map((c) => c.header)
      : args.pipeline === undefined && args.keys?.length
        ? keyColumns(args.keys)
        : undefined;
    const rendered = renderTabular(table, format, known);
    const headers = columns ? columns.map((c) => c.header) : rendered.headers;
    const skip = args.skip ?? 0;
    // Query mode pages on with skip; a pipeline has no skip to resume from, so it narrows instead.
    const nextCall =
      truncated && args.pipeline === undefined
        ? { tool: 'export_data', arguments: { ...args, skip: skip + cap } }
        : undefined;
    const data: Record<string, unknown> = {
      class_name: className,
      format,
      headers,
      row_count: emitted.length,
      pagination: { row_cap: cap, skip, has_more: truncated },
    };
    if (truncated) {
      data.truncated = true;
      if (available !== undefined) data.available_rows = available;
      data.row_cap = cap;
      data.hint = `Only the first ${cap} rows were exported${available !== undefined ? ` of ${available}` : ''}. ${nextCall ? 'next_call exports the next rows; or n' : 'N'}arrow the export with where (or a $match in the pipeline), or raise row_cap (at most ${MAX_EXPORT_ROW_CAP}).`;
    }
    if (elidedFields?.length) {
      data.elided_fields = elidedFields;
      data.elided_note = 'Large fields left out; name them in keys or columns to export them.';
    }
    if (withheldFields) {
      data.withheld_fields = withheldFields;
      data.withheld_note = WITHHELD_NOTE;
    }
    Object.assign(data, withheldIncludesPayload(withheldIncludes));
    if (nextCall) data.next_call = nextCall;
    data.output = rendered.output;
    return data;
  },
});
