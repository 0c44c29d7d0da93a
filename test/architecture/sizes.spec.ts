import { join } from 'node:path';
import {
  lineCount,
  longFunctions,
  MAX_FILE_LINES,
  MAX_FUNCTION_LINES,
  sizeOffenders,
  type SizeOffender,
} from './sizes';

const SRC = join(__dirname, '../../libs/parse-agent/src');

/**
 * Known offenders, by file (files) or `file#name` (functions). This list only shrinks: a new
 * offender fails the test, and so does an entry that is no longer over its limit (delete it).
 */
const ALLOWED_FILES: readonly string[] = [];
const ALLOWED_FUNCTIONS: readonly string[] = [];

function describeAll(offenders: SizeOffender[]): string[] {
  return offenders.map((o) => `${o.where} ${o.key} (${o.lines} lines)`);
}

describe('library file and function sizes', () => {
  const { files, functions } = sizeOffenders(SRC);

  it(`has no library file over ${MAX_FILE_LINES} lines beyond the allowlist`, () => {
    expect(describeAll(files.filter((o) => !ALLOWED_FILES.includes(o.key)))).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines beyond the allowlist`, () => {
    expect(describeAll(functions.filter((o) => !ALLOWED_FUNCTIONS.includes(o.key)))).toEqual([]);
  });

  it('keeps the allowlist honest: every entry is still over its limit (else delete it)', () => {
    const over = new Set([...files, ...functions].map((o) => o.key));
    expect([...ALLOWED_FILES, ...ALLOWED_FUNCTIONS].filter((key) => !over.has(key))).toEqual([]);
  });

  it('counts lines as wc -l does', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a\n')).toBe(1);
    expect(lineCount('a\nb')).toBe(2);
    expect(lineCount('a\n\nb\n')).toBe(3);
  });

  it('measures functions, methods, arrow functions and function expressions, named with file:line', () => {
    const body = (n: number): string => Array.from({ length: n }, () => '  x();').join('\n');
    const text = [
      'export function longDecl() {', // line 1, 5 lines
      body(3),
      '}',
      'class Box {',
      '  method() {', // line 7, 4 lines
      body(2),
      '  }',
      '}',
      'const arrow = () => {', // line 12, 4 lines
      body(2),
      '};',
      'const table = { handler: function () {', // line 16, 3 lines
      body(1),
      '} };',
      'function short() {', // line 19, 2 lines: under the limit
      '}',
    ].join('\n');
    expect(longFunctions('f.ts', text, 2)).toEqual([
      { key: 'f.ts#longDecl', where: 'f.ts:1', lines: 5 },
      { key: 'f.ts#Box.method', where: 'f.ts:7', lines: 4 },
      { key: 'f.ts#arrow', where: 'f.ts:12', lines: 4 },
      { key: 'f.ts#handler', where: 'f.ts:16', lines: 3 },
    ]);
  });

  it('reads the library (a broken walker would pass everything)', () => {
    const strict = sizeOffenders(SRC, 300, 40);
    expect(strict.files.length).toBeGreaterThan(10);
    expect(strict.functions.length).toBeGreaterThan(10);
    expect(strict.files.map((o) => o.key)).toContain('agent/parse-agent.ts');
  });
});
