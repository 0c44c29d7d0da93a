import { AgentValidationError } from '../../core/errors';
import { buildDistinctPipeline, shapeDistinctResult } from './distinct-pipeline';
import {
  buildGroupByDatePipeline,
  formatDateKey,
  shapeGroupByDateResult,
} from './group-by-date-pipeline';
import { buildGroupByPipeline, shapeGroupByResult } from './group-by-pipeline';

describe('buildGroupByPipeline', () => {
  it('counts by a field, largest first, asking for limit + 1 rows', () => {
    expect(buildGroupByPipeline({ field: 'status' })).toEqual([
      { $group: { _id: '$status', value: { $sum: 1 } } },
      { $sort: { value: -1, _id: 1 } },
      { $limit: 201 },
    ]);
  });

  it('puts where first, flattens arrays, and maps operations', () => {
    expect(
      buildGroupByPipeline({
        field: 'tags',
        where: { isRemoved: { $ne: true } },
        operation: 'sum',
        valueField: 'totalCents',
        sort: 'key_asc',
        limit: 10,
        flattenArrays: true,
      }),
    ).toEqual([
      { $match: { isRemoved: { $ne: true } } },
      { $unwind: '$tags' },
      { $group: { _id: '$tags', value: { $sum: '$totalCents' } } },
      { $sort: { _id: 1 } },
      { $limit: 11 },
    ]);
    expect(buildGroupByPipeline({ field: 'a', operation: 'average', valueField: 'n' })[0]).toEqual({
      $group: { _id: '$a', value: { $avg: '$n' } },
    });
  });

  it.each([
    [{ field: 'a', operation: 'sum' }, /value_field/],
    [{ field: 'a', operation: 'median' }, /Unknown operation/],
    [{ field: '$a' }, /write "a"/],
    [{ field: 'a', limit: 1001 }, /1 to 1000/],
    [{ field: 'a', limit: 0 }, /1 to 1000/],
    [{ field: 'a', sort: 'random' }, /Unknown sort/],
    [{ field: 'a', where: [] }, /'where' must be an object/],
  ])('refuses %j', (params, message) => {
    expect(() => buildGroupByPipeline(params as never)).toThrow(AgentValidationError);
    expect(() => buildGroupByPipeline(params as never)).toThrow(message);
  });
});

describe('shapeGroupByResult', () => {
  it('returns the spec envelope keys', () => {
    const out = shapeGroupByResult({
      className: 'Capture',
      field: 'lastAction',
      rows: [
        { _id: 'submitted', value: 142 },
        { _id: 'approved', value: 88 },
      ],
    });
    expect(out).toEqual({
      class_name: 'Capture',
      field: 'lastAction',
      operation: 'count',
      group_count: 2,
      limit: 200,
      groups: [
        { key: 'submitted', value: 142 },
        { key: 'approved', value: 88 },
      ],
    });
  });

  it('compacts pointer keys and reports pointer_class', () => {
    const out = shapeGroupByResult({
      className: 'Capture',
      field: 'author',
      pointerClass: '_User',
      rows: [
        { _id: '_User$abc123', value: 47 },
        { _id: { __type: 'Pointer', className: '_User', objectId: 'def456' }, value: 31 },
      ],
    });
    expect(out.pointer_class).toBe('_User');
    expect(out.groups).toEqual([
      { key: 'abc123', value: 47 },
      { key: 'def456', value: 31 },
    ]);
  });

  it('drops the extra row and flags truncation', () => {
    const rows = [1, 2, 3].map((i) => ({ _id: `k${i}`, value: i }));
    const out = shapeGroupByResult({ className: 'C', field: 'f', limit: 2, rows });
    expect(out.groups).toHaveLength(2);
    expect(out.group_count).toBe(2);
    expect(out.truncated).toBe(true);
  });
});

describe('buildGroupByDatePipeline', () => {
  it('truncates with $dateTrunc, chronological by default', () => {
    expect(buildGroupByDatePipeline({ field: 'createdAt', interval: 'day' })).toEqual([
      { $group: { _id: { $dateTrunc: { date: '$createdAt', unit: 'day' } }, value: { $sum: 1 } } },
      { $sort: { _id: 1 } },
      { $limit: 201 },
    ]);
  });

  it('passes the timezone and starts weeks on Monday', () => {
    const [group] = buildGroupByDatePipeline({
      field: 'createdAt',
      interval: 'week',
      timezone: 'America/New_York',
    });
    expect(group).toEqual({
      $group: {
        _id: {
          $dateTrunc: {
            date: '$createdAt',
            unit: 'week',
            timezone: 'America/New_York',
            startOfWeek: 'monday',
          },
        },
        value: { $sum: 1 },
      },
    });
  });

  it.each([
    [{ field: 'd', interval: 'fortnight' }, /Unknown interval/],
    [{ field: 'd', interval: 'day', timezone: 'Mars/Olympus' }, /Unknown timezone/],
    [{ field: 'd', interval: 'day', timezone: '+25:00' }, /Unknown timezone/],
    [{ field: 'd', interval: 'day', operation: 'max' }, /value_field/],
  ])('refuses %j', (params, message) => {
    expect(() => buildGroupByDatePipeline(params as never)).toThrow(message);
  });

  it('accepts fixed offsets', () => {
    expect(() =>
      buildGroupByDatePipeline({ field: 'd', interval: 'day', timezone: '+05:30' }),
    ).not.toThrow();
  });
});

describe('formatDateKey (hand-computed expectations)', () => {
  const d = new Date('2024-11-25T03:30:15Z'); // a Monday, 22:30 on Sunday in New York
  it.each([
    ['year', 'UTC', '2024'],
    ['quarter', 'UTC', '2024-Q4'],
    ['month', 'UTC', '2024-11'],
    ['week', 'UTC', '2024-W48'],
    ['day', 'UTC', '2024-11-25'],
    ['hour', 'UTC', '2024-11-25 03:00'],
    ['minute', 'UTC', '2024-11-25 03:30'],
    ['second', 'UTC', '2024-11-25 03:30:15'],
    ['day', 'America/New_York', '2024-11-24'],
    ['week', 'America/New_York', '2024-W47'],
    ['hour', '+05:30', '2024-11-25 09:00'],
  ] as const)('%s in %s', (interval, tz, key) => {
    expect(formatDateKey(d, interval, tz)).toBe(key);
  });

  it('uses the ISO week-numbering year at year boundaries', () => {
    expect(formatDateKey(new Date('2024-12-30T00:00:00Z'), 'week')).toBe('2025-W01');
    expect(formatDateKey(new Date('2021-01-03T00:00:00Z'), 'week')).toBe('2020-W53');
  });

  it('reads Parse and extended-JSON dates and leaves non-dates alone', () => {
    expect(formatDateKey({ __type: 'Date', iso: '2024-01-02T00:00:00.000Z' }, 'day')).toBe(
      '2024-01-02',
    );
    expect(formatDateKey({ $date: '2024-01-02T00:00:00.000Z' }, 'month')).toBe('2024-01');
    expect(formatDateKey(null, 'day')).toBeNull();
  });
});

describe('shapeGroupByDateResult', () => {
  it('returns the spec envelope keys with formatted keys', () => {
    const out = shapeGroupByDateResult({
      className: 'Capture',
      field: 'createdAt',
      interval: 'day',
      timezone: 'America/New_York',
      rows: [{ _id: new Date('2024-11-24T05:00:00Z'), value: 47 }],
    });
    expect(out).toEqual({
      class_name: 'Capture',
      field: 'createdAt',
      interval: 'day',
      operation: 'count',
      timezone: 'America/New_York',
      sort: 'key_asc',
      groups: [{ key: '2024-11-24', value: 47 }],
    });
  });
});

describe('distinct', () => {
  it('builds a $group on the field with optional sort and limit + 1', () => {
    expect(
      buildDistinctPipeline({
        field: 'mediaFormat',
        where: { isRemoved: { $ne: true } },
        sort: 'desc',
      }),
    ).toEqual([
      { $match: { isRemoved: { $ne: true } } },
      { $group: { _id: '$mediaFormat' } },
      { $sort: { _id: -1 } },
      { $limit: 1001 },
    ]);
    expect(() => buildDistinctPipeline({ field: 'a', limit: 5001 })).toThrow(/1 to 5000/);
    expect(() => buildDistinctPipeline({ field: 'a', sort: 'up' as never })).toThrow(/asc/);
  });

  it('shapes values, compacting pointers', () => {
    expect(
      shapeDistinctResult({
        className: 'Asset',
        field: 'authorTeam',
        pointerClass: 'Team',
        rows: [{ _id: 'Team$alphaTeam' }, { _id: 'Team$betaTeam' }],
      }),
    ).toEqual({
      class_name: 'Asset',
      field: 'authorTeam',
      count: 2,
      values: ['alphaTeam', 'betaTeam'],
      pointer_class: 'Team',
    });
  });

  it("leaves out the pipeline's null group (rows without the field), as a path's own distinct does", () => {
    const shaped = shapeDistinctResult({
      className: 'Asset',
      field: 'tags',
      limit: 2,
      rows: [{ _id: null }, { _id: ['a'] }, {}, { _id: ['b', null] }],
    });
    expect(shaped).toEqual({
      class_name: 'Asset',
      field: 'tags',
      count: 2,
      values: [['a'], ['b', null]],
    });
    expect(
      shapeDistinctResult({
        className: 'A',
        field: 'x',
        limit: 1,
        rows: [{ _id: null }, { _id: 1 }],
      }),
    ).not.toHaveProperty('truncated');
  });
});
