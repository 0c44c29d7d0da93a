import { isInternalField } from '../query/internal-fields';

/** Text layouts for query rows; `json` is handled by the query envelope itself. */
export type TabularFormat = 'csv' | 'markdown' | 'table';

export const TABULAR_FORMATS: readonly TabularFormat[] = ['csv', 'markdown', 'table'];

export interface TabularOutput {
  headers: string[];
  output: string;
}

/** Wrapper tags never rendered as columns (internal fields never are either: see below). */
const WRAPPER_COLUMNS: ReadonlySet<string> = new Set(['__type', 'className']);

const excludedColumn = (key: string): boolean => WRAPPER_COLUMNS.has(key) || isInternalField(key);

type Renderer = (headers: string[], rows: string[][]) => string;

const RENDERERS: Record<TabularFormat, Renderer> = {
  csv: renderCsv,
  markdown: renderMarkdown,
  table: renderTable,
};

/**
 * Renders rows as CSV, a Markdown table or an ASCII grid. Columns are `columns` when the caller
 * knows them (named keys or columns: the header line is there even with no rows), else the first
 * row's keys, so the layout is stable and cheap; keys that only appear in later rows are not
 * shown, and a row missing a column gets an empty cell. Excluded keys are never columns.
 */
export function renderTabular(
  rows: Array<Record<string, unknown>>,
  format: TabularFormat,
  columns?: readonly string[],
): TabularOutput {
  const render = RENDERERS[format];
  if (!render) {
    throw new TypeError(
      `Unknown tabular format '${String(format)}'. Use one of: ${TABULAR_FORMATS.join(', ')}.`,
    );
  }
  const named = columns ?? (rows.length === 0 ? [] : Object.keys(rows[0]));
  const headers = named.filter((key) => !excludedColumn(key));
  if (headers.length === 0) return { headers, output: '' };
  const cells = rows.map((row) => headers.map((header) => cellText(row[header])));
  return { headers, output: render(headers, cells) };
}

/** Text of one cell: empty for missing values, JSON for structures, plain text otherwise. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function renderCsv(headers: string[], rows: string[][]): string {
  return [headers, ...rows].map((row) => row.map(csvField).join(',')).join('\n');
}

/** RFC 4180: quote a field holding a comma, quote or line break, and double its quotes. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function renderMarkdown(headers: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.map(markdownCell).join(' | ')} |`;
  const separator = `| ${headers.map(() => '---').join(' | ')} |`;
  return [line(headers), separator, ...rows.map(line)].join('\n');
}

/** A line break or bare pipe would end the cell or the row; backslashes first so escapes survive. */
function markdownCell(text: string): string {
  return singleLine(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|');
}

function renderTable(headers: string[], rows: string[][]): string {
  const lines = [headers, ...rows].map((row) => row.map(singleLine));
  const widths = headers.map((_, column) =>
    Math.max(...lines.map((row) => displayLength(row[column]))),
  );
  const border = `+${widths.map((width) => '-'.repeat(width + 2)).join('+')}+`;
  const line = (cells: string[]): string =>
    `| ${cells.map((cell, column) => padEnd(cell, widths[column])).join(' | ')} |`;
  const [head, ...body] = lines;
  return [border, line(head), border, ...body.map(line), border].join('\n');
}

function singleLine(text: string): string {
  return text.replace(/\r\n|\r|\n/g, ' ');
}

/** Counts code points, so an astral character (emoji) does not widen its column twice. */
function displayLength(text: string): number {
  return [...text].length;
}

function padEnd(text: string, width: number): string {
  return text + ' '.repeat(width - displayLength(text));
}
