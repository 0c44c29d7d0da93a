import {
  formatCountResult,
  formatObjectResult,
  formatObjectsResult,
  formatSampleResult,
} from './object-result';

const post = {
  objectId: 'p1',
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-02T00:00:00.000Z',
  title: 'Hello',
  ACL: { u1: { read: true, write: true } },
  author: {
    __type: 'Object',
    className: 'Author',
    objectId: 'a1',
    name: 'Ada',
    ACL: { 'role:Staff': { read: true } },
  },
};

describe('formatObjectResult', () => {
  it('puts identity and timestamps first and simplifies the object', () => {
    const data = formatObjectResult('Post', post);
    expect(data).toEqual({
      class_name: 'Post',
      object_id: 'p1',
      created_at: '2024-01-01T00:00:00.000Z',
      updated_at: '2024-01-02T00:00:00.000Z',
      object: {
        objectId: 'p1',
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-02T00:00:00.000Z',
        title: 'Hello',
        author: { className: 'Author', objectId: 'a1', name: 'Ada' },
      },
    });
    expect(Object.keys(data)).toEqual([
      'class_name',
      'object_id',
      'created_at',
      'updated_at',
      'object',
    ]);
    expect(JSON.stringify(data)).not.toContain('ACL');
    expect(JSON.stringify(data)).not.toContain('role:Staff');
  });

  it('adds truncated_include_fields only when given a non-empty map', () => {
    expect(
      formatObjectResult('Post', post, { truncatedIncludeFields: { author: ['bio'] } })
        .truncated_include_fields,
    ).toEqual({ author: ['bio'] });
    expect(formatObjectResult('Post', post, {})).not.toHaveProperty('truncated_include_fields');
  });

  it('adds withheld_includes and its note only when a join withheld something', () => {
    const data = formatObjectResult('Post', post, { withheldIncludes: { author: 2 } });
    expect(data.withheld_includes).toEqual({ author: 2 });
    expect(data.withheld_includes_note).toMatch(/plain pointers/);
    for (const withheldIncludes of [undefined, {}, { author: 0 }] as Array<
      Record<string, number> | undefined
    >) {
      const none = formatObjectResult('Post', post, { withheldIncludes });
      expect(none).not.toHaveProperty('withheld_includes');
      expect(none).not.toHaveProperty('withheld_includes_note');
    }
  });

  it('reports missing timestamps as null rather than dropping the keys', () => {
    const data = formatObjectResult('Post', { objectId: 'p2' });
    expect(data).toMatchObject({ object_id: 'p2', created_at: null, updated_at: null });
  });

  it('does not mutate the fetched object', () => {
    const input = structuredClone(post);
    formatObjectResult('Post', input);
    expect(input).toEqual(post);
  });
});

describe('formatObjectsResult', () => {
  it('simplifies each object and counts found against requested', () => {
    const data = formatObjectsResult('Post', { p1: post }, ['p9'], 2, {
      truncatedIncludeFields: { author: ['bio'] },
    });
    expect(data).toEqual({
      class_name: 'Post',
      objects: {
        p1: {
          objectId: 'p1',
          createdAt: '2024-01-01T00:00:00.000Z',
          updatedAt: '2024-01-02T00:00:00.000Z',
          title: 'Hello',
          author: { className: 'Author', objectId: 'a1', name: 'Ada' },
        },
      },
      missing: ['p9'],
      requested: 2,
      found: 1,
      truncated_include_fields: { author: ['bio'] },
    });
    expect(JSON.stringify(data)).not.toContain('ACL');
  });

  it('shapes the empty request', () => {
    const data = formatObjectsResult('Post', {}, [], 0);
    expect(data).toEqual({ class_name: 'Post', objects: {}, missing: [], requested: 0, found: 0 });
    expect(data).not.toHaveProperty('truncated_include_fields');
  });

  it('copies the missing list', () => {
    const missing = ['x'];
    const data = formatObjectsResult('Post', {}, missing, 1);
    missing.push('y');
    expect(data.missing).toEqual(['x']);
  });
});

describe('formatSampleResult', () => {
  it('counts and simplifies the samples and notes their recency', () => {
    const data = formatSampleResult('Post', [post, { objectId: 'p2', ACL: {} }]);
    expect(data).toEqual({
      class_name: 'Post',
      sample_count: 2,
      samples: [
        {
          objectId: 'p1',
          createdAt: '2024-01-01T00:00:00.000Z',
          updatedAt: '2024-01-02T00:00:00.000Z',
          title: 'Hello',
          author: { className: 'Author', objectId: 'a1', name: 'Ada' },
        },
        { objectId: 'p2' },
      ],
      note: 'These are the 2 most recently created objects',
    });
  });

  it('handles no samples', () => {
    expect(formatSampleResult('Post', [])).toEqual({
      class_name: 'Post',
      sample_count: 0,
      samples: [],
      note: 'These are the 0 most recently created objects',
    });
  });
});

describe('formatCountResult', () => {
  it('echoes the constraints', () => {
    expect(formatCountResult('Post', 7, { status: 'live' })).toEqual({
      class_name: 'Post',
      count: 7,
      constraints: { status: 'live' },
    });
  });

  it('uses {} when there were no constraints', () => {
    expect(formatCountResult('Post', 0, undefined)).toEqual({
      class_name: 'Post',
      count: 0,
      constraints: {},
    });
    expect(formatCountResult('Post', 0, null).constraints).toEqual({});
  });
});
