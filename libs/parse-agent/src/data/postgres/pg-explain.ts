import type { ExplainSummary } from '../../ports/data-path';
import { quoteIdent } from './pg-identifiers';
import type { SqlQuery } from './sql-params';

/** `EXPLAIN (FORMAT JSON)` of a compiled query: the plan only, the query is not run. */
export function explainQuery(query: SqlQuery): SqlQuery {
  return { text: `EXPLAIN (FORMAT JSON) ${query.text}`, values: query.values };
}

/** The planner's idea of a table's size: estimated rows (-1 before ANALYZE) and bytes on disk. */
export function tableSizeQuery(className: string): SqlQuery {
  return {
    text:
      'SELECT c.reltuples::float8 AS "rows", pg_relation_size(c.oid)::float8 AS "bytes" ' +
      'FROM pg_class AS c WHERE c.oid = to_regclass($1::text)',
    values: [quoteIdent(className)],
  };
}

interface PlanNode {
  'Node Type'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Plan Rows'?: number;
  'Total Cost'?: number;
  Plans?: PlanNode[];
}

export interface TableSize {
  rows: number;
  bytes: number;
}

/** A table counts as large from this many rows (or, before ANALYZE, from this many bytes). */
export const LARGE_TABLE_ROWS = 1_000;
const LARGE_TABLE_BYTES = 1 << 20;

export function isLargeTable(size: TableSize | undefined, minRows = LARGE_TABLE_ROWS): boolean {
  if (!size) return false;
  if (size.rows >= 0) return size.rows >= minRows;
  return size.bytes >= LARGE_TABLE_BYTES;
}

/**
 * Summarises a JSON plan for the agent: node types, relations and indexes, never the filter text
 * (it would spell out the reader's principals and scope values). A sequential scan of the queried
 * class counts as a collection scan when the table is large, and so does an index scan with no
 * index condition: the planner walks a whole index (the primary key, say, to return rows in
 * `objectId` order) and filters every row it meets, which reads the table as a whole just the same.
 */
export function summarizePlan(
  className: string,
  plan: unknown,
  size: TableSize | undefined,
  minRows = LARGE_TABLE_ROWS,
): ExplainSummary {
  const root = (Array.isArray(plan) ? (plan[0] as { Plan?: PlanNode })?.Plan : undefined) ?? {};
  const nodes: Array<{ node: string; relation?: string; index?: string; rows?: number }> = [];
  const indexes = new Set<string>();
  let seqScan = false;
  let fullIndexScan = false;
  let indexScan: string | undefined;
  const walk = (node: PlanNode, depth: number) => {
    if (depth > 64) return;
    const type = node['Node Type'] ?? 'Unknown';
    nodes.push({
      node: type,
      ...(node['Relation Name'] ? { relation: node['Relation Name'] } : {}),
      ...(node['Index Name'] ? { index: node['Index Name'] } : {}),
      ...(typeof node['Plan Rows'] === 'number' ? { rows: node['Plan Rows'] } : {}),
    });
    if (node['Index Name']) indexes.add(node['Index Name']);
    if (node['Relation Name'] === className) {
      if (type === 'Seq Scan' || type === 'Parallel Seq Scan') seqScan = true;
      else if (/^(Parallel )?Index (Only )?Scan$/.test(type) && !node['Index Cond'])
        fullIndexScan = true;
      else if (!indexScan && /Index|Bitmap/.test(type)) indexScan = type;
    }
    for (const child of node.Plans ?? []) walk(child, depth + 1);
  };
  walk(root, 0);
  const large = isLargeTable(size, minRows);
  return {
    winningPlan: seqScan
      ? 'Seq Scan'
      : fullIndexScan
        ? 'Full Index Scan'
        : (indexScan ?? root['Node Type'] ?? 'Unknown'),
    collectionScan: (seqScan || fullIndexScan) && large,
    indexesUsed: [...indexes],
    details: {
      nodes: nodes.slice(0, 50),
      estimated_cost: root['Total Cost'],
      table_rows_estimate: size && size.rows >= 0 ? size.rows : undefined,
      sequential_scan: seqScan,
      full_index_scan: fullIndexScan,
      large_table: large,
    },
  };
}
