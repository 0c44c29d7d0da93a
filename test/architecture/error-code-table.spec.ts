import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Codes a library error carries that never reach a tool envelope, with where they end up. */
const NOT_TOOL_RESULTS: Record<string, string> = {
  unauthorized: 'the HTTP layer answers 401 instead',
  store_unavailable: 'the HTTP layer answers 503 instead',
  recursion_limit_exceeded: 'thrown when a sub-agent is constructed',
};

describe('the error-code table of docs/tools.md', () => {
  it('lists every error_code a tool call can answer', () => {
    const errors = readFileSync(join(ROOT, 'libs/parse-agent/src/core/errors.ts'), 'utf8');
    const envelope = readFileSync(join(ROOT, 'libs/parse-agent/src/core/envelope.ts'), 'utf8');
    const codes = new Set(
      [...`${errors}\n${envelope}`.matchAll(/(?:errorCode = |, )'([a-z_]+)'/g)].map((m) => m[1]),
    );
    expect(codes).toContain('invalid_configuration');
    expect(codes).toContain('internal_error');
    const table = readFileSync(join(ROOT, 'docs/tools.md'), 'utf8');
    const documented = new Set([...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]));
    const missing = [...codes].filter((c) => !(c in NOT_TOOL_RESULTS) && !documented.has(c));
    expect(missing).toEqual([]);
  });
});
