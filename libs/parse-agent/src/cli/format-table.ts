import { terminalSafe } from './terminal-text';

const MAX_CELL = 40;
const MAX_COLUMNS = 12;

/**
 * Rows as a plain-text table for terminals: columns in order of first appearance (at most 12),
 * cells on one line and cut at 40 characters, control and invisible characters shown as escapes
 * (`terminalSafe`). Says what it left out, so nothing looks complete when it is not.
 */
export function formatTable(rows: readonly Record<string, unknown>[]): string {
  if (!rows.length) return '(no rows)';
  const columns: string[] = [];
  for (const row of rows) {
    for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  }
  const shown = columns.slice(0, MAX_COLUMNS);
  const cells = rows.map((row) => shown.map((column) => cell(row[column])));
  const headers = shown.map((column) => terminalSafe(column));
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...cells.map((line) => line[i].length)),
  );
  const render = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const lines = [render(headers), render(widths.map((w) => '-'.repeat(w))), ...cells.map(render)];
  const hidden = columns.length - shown.length;
  if (hidden > 0)
    lines.push(
      `(${hidden} more column(s) not shown: ${terminalSafe(columns.slice(MAX_COLUMNS).join(', '))}; use JSON output to see them)`,
    );
  return lines.join('\n');
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // Cells are cut after escaping, so an escape counts at the width it shows.
  const flat = terminalSafe(text.replace(/[ \t\n\r]+/g, ' '));
  return flat.length > MAX_CELL ? flat.slice(0, MAX_CELL - 1) + '…' : flat;
}

/** The rows of a tool result, when it has some: `data.results`, `data.rows`, or an array. */
export function rowsOf(data: unknown): Record<string, unknown>[] | undefined {
  const candidate = Array.isArray(data)
    ? data
    : ((data as { results?: unknown; rows?: unknown } | null)?.results ??
      (data as { rows?: unknown } | null)?.rows);
  if (!Array.isArray(candidate)) return undefined;
  return candidate.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r))
    ? (candidate as Record<string, unknown>[])
    : undefined;
}
