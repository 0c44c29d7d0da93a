import { buildNextCall, formatQueryResult } from './query-result';
import {
  byteLength,
  capQueryResult,
  capToolResult,
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

  it('removes the stale notes and next_call, counts what it kept, keeps class_name and pagination', () => {
    const data = queryData(20, 2000);
    expect(data).toHaveProperty('next_call');
    const out = capQueryResult(data, 6000)!;
    for (const stale of ['truncated', 'truncated_note', 'next_call']) {
      expect(out).not.toHaveProperty(stale);
    }
    expect(out.result_count).toBe((out._truncated as Truncation).kept_count);
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

/** Argument names of a few tools, as their input schemas declare them. */
const ARGS = {
  aggregate: ['class_name', 'pipeline', 'apply_canonical_filter', 'compact_pointers'],
  get_objects: ['class_name', 'ids', 'include', 'apply_canonical_filter'],
  get_object: ['class_name', 'object_id', 'include', 'apply_canonical_filter'],
  query_class: ['class_name', 'where', 'keys', 'include', 'order', 'limit', 'skip', 'format'],
  export_data: ['class_name', 'format', 'columns', 'where', 'keys', 'limit', 'row_cap', 'pipeline'],
} as const;
const ctx = (toolName: keyof typeof ARGS) => ({ toolName, argumentNames: ARGS[toolName] });

describe('sizeDiagnostic', () => {
  const secret = 'SECRET-VALUE-';
  const rows = Array.from({ length: 8 }, (_, i) => ({
    objectId: `id${i}`,
    title: 't',
    body: secret + 'x'.repeat(100000 - secret.length),
  }));

  it('names the heaviest fields with per-record sizes and how to ask for less with keys', () => {
    const data = { class_name: 'Post', results: rows };
    const text = sizeDiagnostic(data, 4096, ctx('query_class'));
    expect(text).toContain('query_class');
    expect(text).toContain(`${byteLength(data)} bytes`);
    expect(text).toContain('4096');
    expect(text).toContain('body ~97.7 KB, objectId ~5 B, title ~3 B');
    expect(text).toContain('keys: ["objectId","title","createdAt","updatedAt"]');
    expect(text).toContain('limit:');
    expect(text).toContain('where:');
    expect(text).not.toContain(secret);
    expect(text).not.toContain('xxxx');
  });

  it("names only the tool's own arguments: aggregate gets pipeline stages, never keys or select", () => {
    const text = sizeDiagnostic({ class_name: 'Post', results: rows }, 4096, ctx('aggregate'));
    expect(text).toContain('end pipeline: with {"$project":{"body":0}}');
    expect(text).toContain('a $project or $limit stage in pipeline:');
    for (const foreign of ['keys:', 'select:', 'limit:', 'where:'])
      expect(text).not.toContain(foreign);
  });

  it('samples get_objects values and a get_object object', () => {
    const objects = Object.fromEntries(rows.map((row) => [row.objectId, row]));
    const many = sizeDiagnostic({ class_name: 'Post', objects }, 4096, ctx('get_objects'));
    expect(many).toContain('body ~97.7 KB');
    expect(many).toContain('fewer ids:');
    expect(many).not.toContain('keys:');
    const one = sizeDiagnostic({ class_name: 'Post', object: rows[0] }, 4096, ctx('get_object'));
    expect(one).toContain('body ~97.7 KB');
    expect(one).not.toContain('keys:');
  });

  it('omits the field diagnostic for rendered text (export_data, tabular results)', () => {
    const text = sizeDiagnostic(
      { headers: ['a'], output: 'y'.repeat(10000), row_count: 1 },
      4096,
      ctx('export_data'),
    );
    expect(text).toContain('export_data');
    expect(text).toContain('a lower row_cap:');
    expect(text).not.toContain('keys: [');
    expect(text).not.toContain('heaviest');
  });

  it('offers no keys list when only identity fields exist', () => {
    const text = sizeDiagnostic(
      { results: [{ objectId: 'x'.repeat(100) }] },
      4096,
      ctx('query_class'),
    );
    expect(text).toContain('objectId ~102 B');
    expect(text).not.toContain('keys: [');
  });

  it('says only "Ask for less." for a tool without arguments to narrow', () => {
    const text = sizeDiagnostic({ blob: 'x'.repeat(5000) }, 4096, {
      toolName: 'custom',
      argumentNames: ['name'],
    });
    expect(text).toContain('Ask for less.');
    expect(text).not.toMatch(/[a-z_]+:/);
  });

  it('shortens the message to fit small limits, never exceeding them', () => {
    const data = { class_name: 'Post', results: rows };
    for (let maxBytes = 2; maxBytes <= 600; maxBytes += 7) {
      expect(byteLength(sizeDiagnostic(data, maxBytes, ctx('query_class')))).toBeLessThanOrEqual(
        maxBytes,
      );
    }
  });

  it('gives up the keys suggestion before the field sizes, and those before the advice', () => {
    const data = { class_name: 'Post', results: rows };
    const texts = Array.from({ length: 120 }, (_, i) =>
      sizeDiagnostic(data, 100 + i * 5, ctx('query_class')),
    );
    expect(texts[texts.length - 1]).toContain('keys: [');
    expect(texts.some((t) => t.includes('heaviest') && !t.includes('keys: ['))).toBe(true);
    expect(texts.some((t) => t.includes('Ask for less') && !t.includes('heaviest'))).toBe(true);
    for (const text of texts) {
      if (text.includes('keys: [')) expect(text).toContain('heaviest');
    }
  });
});

describe('capToolResult: every result with rows recovers', () => {
  const big = (i: number) => ({ objectId: `id${i}`, title: `t${i}`, body: 'x'.repeat(3000) });

  it('aggregate: drops the heaviest field, keeps leading rows, pages with a $skip stage', () => {
    const data = {
      class_name: 'Post',
      pipeline_stages: 1,
      result_count: 40,
      results: Array.from({ length: 40 }, (_, i) => ({ ...big(i), note: 'y'.repeat(60) })),
    };
    const out = capToolResult(data, 1500, ctx('aggregate'))!;
    expect(byteLength(out)).toBeLessThanOrEqual(1500);
    const truncation = out._truncated as Truncation;
    expect(truncation.dropped_fields).toEqual(['body']);
    expect(truncation.kept_count).toBeLessThan(40);
    expect(out.result_count).toBe(truncation.kept_count);
    expect(truncation.next_skip).toBe(truncation.kept_count);
    expect(truncation.hint).toContain(`{"$skip":${truncation.kept_count}}`);
    expect(truncation.hint).toContain('pipeline:');
    for (const foreign of ['keys:', 'select:', 'skip:', 'get_object']) {
      expect(truncation.hint).not.toContain(foreign);
    }
  });

  it('get_objects: keeps the objects that fit and lists the ids of the rest', () => {
    const objects = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`id${i}`, { ...big(i), note: 'y'.repeat(200) }]),
    );
    const data = { class_name: 'Post', objects, missing: ['zz'], requested: 11, found: 10 };
    const out = capToolResult(data, 1800, ctx('get_objects'))!;
    expect(byteLength(out)).toBeLessThanOrEqual(1800);
    const truncation = out._truncated as Truncation & { not_returned: string[] };
    const kept = Object.keys(out.objects as object);
    expect(kept.length).toBe(truncation.kept_count);
    expect([...kept, ...truncation.not_returned]).toEqual(Object.keys(objects));
    expect(out.missing).toEqual(['zz']);
    expect(truncation.dropped_fields).toEqual(['body']);
    expect(truncation.hint).toContain('ids:');
    expect(truncation.hint).toContain('get_object(class_name: "Post", object_id: <id>)');
    expect(truncation.hint).not.toContain('skip:');
  });

  it('get_object: drops the heaviest fields until the object fits', () => {
    const object = { objectId: 'a', a: 'x'.repeat(3000), b: 'y'.repeat(2000), c: 'small' };
    const data = { class_name: 'Post', object_id: 'a', object };
    const out = capToolResult(data, 1000, ctx('get_object'))!;
    expect(out.object).toEqual({ objectId: 'a', c: 'small' });
    const truncation = out._truncated as Truncation;
    expect(truncation.dropped_fields).toEqual(['a', 'b']);
    expect(truncation.hint).not.toContain('get_object(');
  });

  it('get_object: names include: when an included object made it large', () => {
    const object = {
      objectId: 'a',
      author: { __type: 'Object', className: 'Author', bio: 'x'.repeat(3000) },
    };
    const out = capToolResult({ class_name: 'Post', object }, 1000, ctx('get_object'))!;
    expect((out._truncated as Truncation).hint).toContain('include:');
  });

  it('returns null when even one object stripped to its identity does not fit', () => {
    expect(
      capToolResult({ object: { objectId: 'x'.repeat(5000) } }, 1000, ctx('get_object')),
    ).toBeNull();
  });
});
