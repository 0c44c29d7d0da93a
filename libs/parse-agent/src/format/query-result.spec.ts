import { buildNextCall, DEFAULT_RESULT_BUDGET_BYTES, formatQueryResult } from './query-result';
import { serializedJsonOf } from './serialized-json';

function rows(count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => ({
    objectId: `id${i}`,
    n: i,
    ACL: { [`user${i}`]: { read: true } },
  }));
}

describe('formatQueryResult (json)', () => {
  it('shapes an empty result without next_call or truncation notes', () => {
    const data = formatQueryResult({ className: 'Post', results: [], limit: 100, skip: 0 });
    expect(data).toEqual({
      class_name: 'Post',
      result_count: 0,
      pagination: { limit: 100, skip: 0, has_more: false },
      truncated: false,
      results: [],
    });
    expect(data).not.toHaveProperty('next_call');
    expect(data).not.toHaveProperty('truncated_note');
    expect(data).not.toHaveProperty('truncated_include_fields');
  });

  it('keeps the wire key order', () => {
    const data = formatQueryResult({
      className: 'Post',
      results: rows(60),
      limit: 60,
      skip: 0,
      budgetBytes: 500,
      nextCall: buildNextCall({ className: 'Post', limit: 60, skip: 0 }),
      truncatedIncludeFields: { author: ['bio'] },
    });
    expect(Object.keys(data)).toEqual([
      'class_name',
      'result_count',
      'pagination',
      'truncated',
      'truncated_note',
      'truncated_include_fields',
      'next_call',
      'results',
    ]);
  });

  it('shows every fetched row that fits the byte budget, untruncated', () => {
    const data = formatQueryResult({ className: 'Post', results: rows(60), limit: 100, skip: 0 });
    expect(DEFAULT_RESULT_BUDGET_BYTES).toBe(32 * 1024);
    expect(data.truncated).toBe(false);
    expect(data).not.toHaveProperty('truncated_note');
    expect(data.results).toHaveLength(60);
  });

  it('cuts rows at the byte budget, says so, and resumes right after the last row shown', () => {
    const big = rows(51).map((r) => ({ ...r, text: 'x'.repeat(100) }));
    const data = formatQueryResult({
      className: 'Post',
      results: big,
      limit: 100,
      skip: 20,
      budgetBytes: 1500,
      nextCall: buildNextCall({ className: 'Post', limit: 100, skip: 20 }),
    });
    const shown = data.results as Array<Record<string, unknown>>;
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(51);
    expect(JSON.stringify(shown).length).toBeLessThanOrEqual(1500);
    expect(data.result_count).toBe(shown.length);
    expect(data.truncated).toBe(true);
    expect(data.pagination).toEqual({ limit: 100, skip: 20, has_more: true });
    expect(data.truncated_note).toEqual(expect.stringContaining(`skip ${20 + shown.length}`));
    expect((data.next_call as { arguments: Record<string, unknown> }).arguments.skip).toBe(
      20 + shown.length,
    );
    expect(JSON.stringify(shown)).not.toContain(`"id${shown.length}"`);
    expect(serializedJsonOf(data)?.json).toBe(JSON.stringify(data));
    expect(serializedJsonOf(data)?.bytes).toBe(Buffer.byteLength(JSON.stringify(data), 'utf8'));
  });

  it('knows the UTF-8 size of its JSON text, multi-byte characters and empty pages included', () => {
    const accented = rows(30).map((r, i) => ({ ...r, text: `café ✓ 日本 ${'é'.repeat(i * 7)}` }));
    for (const [results, budgetBytes] of [
      [accented, 700],
      [accented, 32 * 1024],
      [[], 32 * 1024],
      [accented.slice(0, 1), 10],
    ] as const) {
      const data = formatQueryResult({
        className: 'Pöst',
        results: [...results],
        limit: 30,
        skip: 0,
        budgetBytes,
        nextCall: buildNextCall({ className: 'Pöst', limit: 30, skip: 0 }),
      });
      const text = JSON.stringify(data);
      expect(serializedJsonOf(data)?.json).toBe(text);
      expect(serializedJsonOf(data)?.bytes).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });

  it('pages tabular formats the same way as json', () => {
    const big = rows(40).map((r) => ({ ...r, text: 'y'.repeat(100) }));
    const data = formatQueryResult({
      className: 'Post',
      results: big,
      limit: 40,
      skip: 0,
      format: 'csv',
      budgetBytes: 1500,
      nextCall: buildNextCall({ className: 'Post', limit: 40, skip: 0, format: 'csv' }),
    });
    const shown = data.row_count as number;
    expect(shown).toBeLessThan(40);
    expect(String(data.output).split('\n')).toHaveLength(shown + 1);
    expect(data.pagination).toEqual({ limit: 40, skip: 0, has_more: true });
    expect(data.next_call).toEqual({
      tool: 'query_class',
      arguments: { class_name: 'Post', limit: 40, skip: shown, format: 'csv' },
    });
  });

  it('carries its own JSON text, identical to serializing it, so rows are serialized once', () => {
    for (const nextCall of [undefined, buildNextCall({ className: 'Post', limit: 3, skip: 0 })]) {
      const data = formatQueryResult({
        className: 'Post',
        results: rows(3),
        limit: 3,
        skip: 0,
        nextCall,
        withheldFields: { email: 'protected' },
      });
      expect(serializedJsonOf(data)?.json).toBe(JSON.stringify(data));
      expect(serializedJsonOf(data)?.bytes).toBe(Buffer.byteLength(JSON.stringify(data), 'utf8'));
      // A copy with another key has no text of its own: it is serialized afresh.
      expect(serializedJsonOf({ ...data, applied_limits: {} })?.json).toBeUndefined();
    }
  });

  it('names elided and withheld fields without values', () => {
    const data = formatQueryResult({
      className: 'Customer',
      results: [{ objectId: 'c1', name: 'A' }],
      limit: 10,
      skip: 0,
      elidedFields: ['notes'],
      withheldFields: { email: 'protected' },
    });
    expect(data.elided_fields).toEqual(['notes']);
    expect(data.withheld_fields).toEqual({ email: 'protected' });
    expect(String(data.withheld_note)).toContain('protectedFields');
  });

  it('simplifies rows: ACL gone, typed values converted, included objects kept', () => {
    const data = formatQueryResult({
      className: 'Post',
      limit: 10,
      skip: 0,
      results: [
        {
          objectId: 'p1',
          ACL: { 'role:Editors': { write: true } },
          publishedAt: { __type: 'Date', iso: '2024-02-02T00:00:00.000Z' },
          author: {
            __type: 'Object',
            className: '_User',
            objectId: 'u1',
            username: 'ada',
            ACL: { u1: { read: true } },
          },
        },
      ],
    });
    expect(data.results).toEqual([
      {
        objectId: 'p1',
        publishedAt: '2024-02-02T00:00:00.000Z',
        author: { className: '_User', objectId: 'u1', username: 'ada' },
      },
    ]);
    expect(JSON.stringify(data)).not.toContain('ACL');
    expect(JSON.stringify(data)).not.toContain('role:Editors');
  });

  it('sets has_more on a full page and attaches the next_call', () => {
    const nextCall = buildNextCall({ className: 'Post', limit: 10, skip: 30 });
    const data = formatQueryResult({
      className: 'Post',
      results: rows(10),
      limit: 10,
      skip: 30,
      nextCall,
    });
    expect(data.pagination).toEqual({ limit: 10, skip: 30, has_more: true });
    expect(data.next_call).toEqual({
      tool: 'query_class',
      arguments: { class_name: 'Post', limit: 10, skip: 40 },
    });
  });

  it('leaves next_call out when has_more is false, even if the caller built one', () => {
    const data = formatQueryResult({
      className: 'Post',
      results: rows(9),
      limit: 10,
      skip: 0,
      nextCall: buildNextCall({ className: 'Post', limit: 10, skip: 0 }),
    });
    expect(data.pagination).toEqual({ limit: 10, skip: 0, has_more: false });
    expect(data).not.toHaveProperty('next_call');
  });

  it('never reports has_more for a non-positive limit', () => {
    const data = formatQueryResult({ className: 'Post', results: [], limit: 0, skip: 0 });
    expect((data.pagination as { has_more: boolean }).has_more).toBe(false);
  });

  it('includes truncated_include_fields only when a pointer was narrowed', () => {
    const withFields = formatQueryResult({
      className: 'Post',
      results: rows(1),
      limit: 10,
      skip: 0,
      truncatedIncludeFields: { author: ['bio', 'avatar'] },
    });
    expect(withFields.truncated_include_fields).toEqual({ author: ['bio', 'avatar'] });
    const empty = formatQueryResult({
      className: 'Post',
      results: rows(1),
      limit: 10,
      skip: 0,
      truncatedIncludeFields: {},
    });
    expect(empty).not.toHaveProperty('truncated_include_fields');
  });

  it('does not mutate the fetched rows', () => {
    const input = rows(3);
    const before = structuredClone(input);
    formatQueryResult({ className: 'Post', results: input, limit: 3, skip: 0 });
    expect(input).toEqual(before);
  });
});

describe('formatQueryResult (tabular)', () => {
  it('renders csv over simplified rows', () => {
    const data = formatQueryResult({
      className: 'Post',
      format: 'csv',
      limit: 10,
      skip: 0,
      results: [
        {
          objectId: 'p1',
          ACL: { '*': { read: true } },
          when: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' },
          author: { __type: 'Pointer', className: 'Author', objectId: 'a1' },
        },
      ],
    });
    expect(data).toEqual({
      class_name: 'Post',
      format: 'csv',
      headers: ['objectId', 'when', 'author'],
      row_count: 1,
      pagination: { limit: 10, skip: 0, has_more: false },
      truncated: false,
      output: 'objectId,when,author\np1,2024-01-01T00:00:00.000Z,Author$a1',
    });
    expect(data).not.toHaveProperty('results');
    expect(data).not.toHaveProperty('next_call');
  });

  it('renders every fetched row, not only the first 50', () => {
    const data = formatQueryResult({
      className: 'Post',
      format: 'markdown',
      results: rows(60),
      limit: 100,
      skip: 0,
    });
    expect(data.row_count).toBe(60);
    expect((data.output as string).split('\n')).toHaveLength(62);
    expect(data.output).toContain('| id59 | 59 |');
    expect(data.output).not.toContain('user');
  });

  it('gives empty headers and output for no rows', () => {
    expect(
      formatQueryResult({ className: 'Post', format: 'table', results: [], limit: 5, skip: 0 }),
    ).toEqual({
      class_name: 'Post',
      format: 'table',
      headers: [],
      row_count: 0,
      pagination: { limit: 5, skip: 0, has_more: false },
      truncated: false,
      output: '',
    });
  });
});

describe('buildNextCall', () => {
  it('advances skip by limit and echoes the caller arguments', () => {
    expect(
      buildNextCall({
        className: 'Order',
        limit: 100,
        skip: 0,
        where: { status: 'paid' },
        keys: ['objectId', 'total'],
        order: '-createdAt',
        include: ['customer'],
      }),
    ).toEqual({
      tool: 'query_class',
      arguments: {
        class_name: 'Order',
        limit: 100,
        skip: 100,
        where: { status: 'paid' },
        keys: ['objectId', 'total'],
        order: '-createdAt',
        include: ['customer'],
      },
    });
  });

  it('drops null, undefined and empty optional arguments', () => {
    const call = buildNextCall({
      className: 'Order',
      limit: 10,
      skip: 5,
      where: {},
      keys: [],
      order: '',
      include: null,
    });
    expect(call.arguments).toEqual({ class_name: 'Order', limit: 10, skip: 15 });
    expect(Object.keys(call.arguments)).toEqual(['class_name', 'limit', 'skip']);
  });

  it('copies where/keys/include so later changes by the caller do not leak in', () => {
    const where: Record<string, unknown> = { status: { $in: ['a'] } };
    const keys = ['a'];
    const call = buildNextCall({ className: 'Order', limit: 1, skip: 0, where, keys });
    (where.status as { $in: string[] }).$in.push('b');
    keys.push('b');
    expect(call.arguments.where).toEqual({ status: { $in: ['a'] } });
    expect(call.arguments.keys).toEqual(['a']);
  });
});
