import { buildNextCall, formatQueryResult } from './query-result';
import {
  byteLength,
  capQueryResult,
  MAX_TOOL_RESPONSE_BYTES,
  sizeDiagnostic,
} from './response-size-cap';

interface Truncation {
  reason: string;
  dropped_fields: string[];
  kept_count: number;
  original_count: number;
  next_skip?: number;
  hint: string;
}

function posts(count: number, bodyChars: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => ({
    objectId: `post${String(i).padStart(4, '0')}`,
    title: `Title ${i}`,
    body: 'x'.repeat(bodyChars),
  }));
}

function queryData(count: number, bodyChars: number, skip = 0): Record<string, unknown> {
  const limit = count;
  return formatQueryResult({
    className: 'Post',
    results: posts(count, bodyChars),
    limit,
    skip,
    budgetBytes: Number.POSITIVE_INFINITY,
    nextCall: buildNextCall({
      className: 'Post',
      limit,
      skip,
      where: { title: { $exists: true } },
    }),
  });
}

describe('byteLength', () => {
  it('measures UTF-8 bytes of compact JSON, as the dispatcher sends it', () => {
    expect(MAX_TOOL_RESPONSE_BYTES).toBe(4194304);
    expect(byteLength({ a: 1 })).toBe(Buffer.byteLength('{"a":1}'));
    expect(byteLength('é')).toBe(4);
    expect(byteLength('🙂')).toBe(6);
    expect(byteLength(undefined)).toBe(0);
  });
});

describe('capQueryResult', () => {
  it('returns data that already fits untouched', () => {
    const data = queryData(3, 10);
    expect(capQueryResult(data, MAX_TOOL_RESPONSE_BYTES)).toBe(data);
  });

  it('drops the heaviest field from every row when that is enough', () => {
    const data = queryData(20, 2000, 40);
    const maxBytes = 6000;
    expect(byteLength(data)).toBeGreaterThan(maxBytes);

    const out = capQueryResult(data, maxBytes)!;
    expect(out).not.toBeNull();
    expect(byteLength(out)).toBeLessThanOrEqual(maxBytes);
    const results = out.results as Array<Record<string, unknown>>;
    expect(results).toHaveLength(20);
    expect(results.every((row) => !('body' in row))).toBe(true);
    expect(results[0]).toEqual({ objectId: 'post0000', title: 'Title 0' });

    const truncation = out._truncated as Truncation;
    expect(truncation).toEqual({
      reason: 'response_exceeded_max_bytes',
      dropped_fields: ['body'],
      kept_count: 20,
      original_count: 20,
      hint: expect.stringContaining("'body'"),
    });
    expect(truncation).not.toHaveProperty('next_skip');
    expect(truncation.hint).toContain('get_object(class_name: "Post"');
    expect(truncation.hint).not.toContain('skip:');
  });

  it('removes the stale counts and next_call but keeps class_name and pagination', () => {
    const data = queryData(20, 2000);
    expect(data).toHaveProperty('next_call');
    const out = capQueryResult(data, 6000)!;
    for (const stale of ['result_count', 'truncated', 'truncated_note', 'next_call']) {
      expect(out).not.toHaveProperty(stale);
    }
    expect(out.class_name).toBe('Post');
    expect(out.pagination).toEqual(data.pagination);
    expect(Object.keys(out).slice(-2)).toEqual(['results', '_truncated']);
  });

  it('also trims trailing rows, resuming after the original skip', () => {
    const data = queryData(50, 2000, 100);
    const maxBytes = 2500;
    const out = capQueryResult(data, maxBytes)!;
    expect(out).not.toBeNull();
    expect(byteLength(out)).toBeLessThanOrEqual(maxBytes);

    const truncation = out._truncated as Truncation;
    const kept = truncation.kept_count;
    expect(kept).toBeGreaterThanOrEqual(1);
    expect(kept).toBeLessThan(50);
    expect(truncation.original_count).toBe(50);
    expect(truncation.next_skip).toBe(100 + kept);
    expect(truncation.dropped_fields).toEqual(['body']);
    expect(truncation.hint).toContain(`first ${kept} of 50`);
    expect(truncation.hint).toContain(`skip: ${100 + kept}`);

    const results = out.results as Array<Record<string, unknown>>;
    expect(results.map((row) => row.objectId)).toEqual(
      Array.from({ length: kept }, (_, i) => `post${String(i).padStart(4, '0')}`),
    );
    // As many rows as fit: one more would break the cap.
    const oneMore = {
      ...out,
      results: [...results, { objectId: 'post9999', title: `Title ${kept}` }],
    };
    expect(byteLength(oneMore)).toBeGreaterThan(maxBytes);
  });

  it('never drops objectId, createdAt or updatedAt, even when they are the heaviest', () => {
    const data = formatQueryResult({
      className: 'Post',
      limit: 100,
      skip: 0,
      results: Array.from({ length: 10 }, (_, i) => ({
        objectId: `${i}`.padStart(300, '0'),
        createdAt: '2024-01-01T00:00:00.000Z',
        tag: 'a',
      })),
    });
    const out = capQueryResult(data, 2000)!;
    expect(out).not.toBeNull();
    expect((out._truncated as Truncation).dropped_fields).toEqual(['tag']);
    const results = out.results as Array<Record<string, unknown>>;
    expect(results.every((row) => 'objectId' in row && 'createdAt' in row)).toBe(true);
  });

  it('trims rows without dropping anything when rows carry only identity fields', () => {
    const data = formatQueryResult({
      className: 'Post',
      limit: 100,
      skip: 0,
      results: Array.from({ length: 40 }, (_, i) => ({ objectId: `id${i}` })),
    });
    const out = capQueryResult(data, 700)!;
    expect(out).not.toBeNull();
    const truncation = out._truncated as Truncation;
    expect(truncation.dropped_fields).toEqual([]);
    expect(truncation.next_skip).toBe(truncation.kept_count);
    expect(truncation.hint).not.toContain('get_object');
    expect(byteLength(out)).toBeLessThanOrEqual(700);
  });

  it('returns null when not even one row fits', () => {
    const data = formatQueryResult({
      className: 'Post',
      limit: 100,
      skip: 0,
      results: [{ objectId: 'x'.repeat(5000), a: 1 }],
    });
    expect(capQueryResult(data, 1000)).toBeNull();
  });

  it('returns null for oversized data without rows to cut', () => {
    expect(capQueryResult({ class_name: 'Post', results: [], blob: 'x'.repeat(500) }, 100)).toBe(
      null,
    );
    expect(capQueryResult({ class_name: 'Post', output: 'x'.repeat(500) }, 100)).toBeNull();
  });

  it('stays within maxBytes (or gives up) for any limit', () => {
    const data = queryData(50, 300, 10);
    for (let maxBytes = 50; maxBytes <= byteLength(data) + 100; maxBytes += 97) {
      const out = capQueryResult(data, maxBytes);
      if (out === null) continue;
      expect(byteLength(out)).toBeLessThanOrEqual(maxBytes);
      if (out !== data) {
        expect((out._truncated as Truncation).kept_count).toBeGreaterThanOrEqual(1);
      }
    }
  });

  it('counts multi-byte characters as bytes, not characters', () => {
    const data = formatQueryResult({
      className: 'Post',
      limit: 100,
      skip: 0,
      results: Array.from({ length: 10 }, (_, i) => ({
        objectId: `id${i}`,
        text: 'é'.repeat(200),
      })),
    });
    const out = capQueryResult(data, 1500)!;
    expect(Buffer.byteLength(JSON.stringify(out, null, 2), 'utf8')).toBeLessThanOrEqual(1500);
  });

  it('does not mutate the input', () => {
    const data = queryData(20, 2000);
    const before = structuredClone(data);
    capQueryResult(data, 2500);
    expect(data).toEqual(before);
  });
});

describe('sizeDiagnostic', () => {
  const secret = 'SECRET-VALUE-';
  const rows = Array.from({ length: 8 }, (_, i) => ({
    objectId: `id${i}`,
    title: 't',
    body: secret + 'x'.repeat(100000 - secret.length),
  }));

  it('names the heaviest fields with per-record sizes and proposes keys without the heaviest', () => {
    const data = { class_name: 'Post', results: rows };
    const text = sizeDiagnostic('aggregate', data, 4096);
    expect(text).toContain('aggregate');
    expect(text).toContain(`${byteLength(data)} bytes`);
    expect(text).toContain('4096');
    expect(text).toContain('body ~97.7 KB, objectId ~5 B, title ~3 B');
    expect(text).toContain('keys: ["objectId","title","createdAt","updatedAt"]');
    expect(text).toContain('limit:');
    expect(text).toContain('where:');
    expect(text).not.toContain(secret);
    expect(text).not.toContain('xxxx');
  });

  it('samples get_objects values and a get_object object', () => {
    const objects = Object.fromEntries(rows.map((row) => [row.objectId, row]));
    const many = sizeDiagnostic('get_objects', { class_name: 'Post', objects }, 4096);
    expect(many).toContain('body ~97.7 KB');
    const one = sizeDiagnostic('get_object', { class_name: 'Post', object: rows[0] }, 4096);
    expect(one).toContain('body ~97.7 KB');
    expect(one).toContain('keys: ["objectId","title","createdAt","updatedAt"]');
  });

  it('omits the field diagnostic for rendered text (export_data, tabular results)', () => {
    const text = sizeDiagnostic(
      'export_data',
      { headers: ['a'], output: 'y'.repeat(10000), row_count: 1 },
      4096,
    );
    expect(text).toContain('export_data');
    expect(text).not.toContain('keys: [');
    expect(text).not.toContain('Heaviest');
  });

  it('offers no keys list when only identity fields exist', () => {
    const text = sizeDiagnostic('query_class', { results: [{ objectId: 'x'.repeat(100) }] }, 4096);
    expect(text).toContain('objectId ~102 B');
    expect(text).not.toContain('keys: [');
  });

  it('shortens the message to fit small limits, never exceeding them', () => {
    const data = { class_name: 'Post', results: rows };
    for (let maxBytes = 2; maxBytes <= 600; maxBytes += 7) {
      expect(byteLength(sizeDiagnostic('get_objects', data, maxBytes))).toBeLessThanOrEqual(
        maxBytes,
      );
    }
  });

  it('gives up the keys suggestion before the field sizes, and those before the advice', () => {
    const data = { class_name: 'Post', results: rows };
    const texts = Array.from({ length: 120 }, (_, i) =>
      sizeDiagnostic('get_objects', data, 100 + i * 5),
    );
    expect(texts[texts.length - 1]).toContain('keys: [');
    expect(texts.some((t) => t.includes('Heaviest') && !t.includes('keys: ['))).toBe(true);
    expect(texts.some((t) => t.includes('Ask for less') && !t.includes('Heaviest'))).toBe(true);
    for (const text of texts) {
      if (text.includes('keys: [')) expect(text).toContain('Heaviest');
    }
  });
});
