/**
 * Evaluates rewritten pipelines with mingo over API-shaped documents of two tenants, to show that what
 * the validator emits really keeps other tenants' rows and hidden fields out of the results.
 * mingo ignores time zones in $dateTrunc and is not a faithful oracle for $lookup with let + pipeline
 * or $sample: tests touching those assert hand-computed expectations and say so in their names.
 */
import { Aggregator } from 'mingo';
import { buildDistinctPipeline, shapeDistinctResult } from './distinct-pipeline';
import { buildGroupByDatePipeline, shapeGroupByDateResult } from './group-by-date-pipeline';
import { buildGroupByPipeline, shapeGroupByResult } from './group-by-pipeline';
import { PipelinePolicy, Where } from './pipeline-policy';
import { validatePipeline } from './pipeline-validator';

type Doc = Record<string, unknown>;

const orders: Doc[] = [
  {
    _id: 'o1',
    objectId: 'o1',
    orgId: 't1',
    status: 'paid',
    amount: 10,
    customer: 'c1',
    ssn: 'S-o1',
    createdAt: new Date('2024-01-05T10:00:00Z'),
  },
  {
    _id: 'o2',
    objectId: 'o2',
    orgId: 't1',
    status: 'paid',
    amount: 20,
    customer: 'c1',
    ssn: 'S-o2',
    createdAt: new Date('2024-01-20T10:00:00Z'),
  },
  {
    _id: 'o3',
    objectId: 'o3',
    orgId: 't1',
    status: 'open',
    amount: 5,
    customer: 'c9',
    ssn: 'S-o3',
    createdAt: new Date('2024-02-01T10:00:00Z'),
  },
  {
    _id: 'o4',
    objectId: 'o4',
    orgId: 't1',
    status: 'paid',
    amount: 99,
    customer: 'c1',
    ssn: 'S-o4',
    isTest: true,
    createdAt: new Date('2024-02-02T10:00:00Z'),
  },
  {
    _id: 'o5',
    objectId: 'o5',
    orgId: 't2',
    status: 'paid',
    amount: 1000,
    customer: 'c9',
    ssn: 'S-o5',
    createdAt: new Date('2024-01-07T10:00:00Z'),
  },
  {
    _id: 'o6',
    objectId: 'o6',
    orgId: 't2',
    status: 'void',
    amount: 2000,
    customer: 'c9',
    ssn: 'S-o6',
    createdAt: new Date('2024-03-01T10:00:00Z'),
  },
];
const customers: Doc[] = [
  { _id: 'c1', objectId: 'c1', orgId: 't1', name: 'Ada', email: 'ada@t1' },
  { _id: 'c9', objectId: 'c9', orgId: 't2', name: 'Zed', email: 'zed@t2' },
];
const tags: Doc[] = [{ _id: 'g1', objectId: 'g1', name: 'x' }];
const collections: Record<string, Doc[]> = { Order: orders, Customer: customers, Tag: tags };

const policy: PipelinePolicy = {
  assertClassReadable: () => undefined,
  allowedFields: (c) =>
    c === 'Order'
      ? new Set(['orgId', 'status', 'amount', 'customer'])
      : c === 'Customer'
        ? new Set(['orgId', 'name'])
        : undefined,
  scopeMatches: (c): Where[] =>
    c === 'Order'
      ? [{ orgId: 't1' }, { isTest: { $ne: true } }]
      : c === 'Customer'
        ? [{ orgId: 't1' }]
        : [],
};

function evaluate(className: string, pipeline: unknown[]): Doc[] {
  const { pipeline: safe } = validatePipeline(className, pipeline, policy);
  return new Aggregator(safe, { collectionResolver: (name: string) => collections[name] }).run(
    collections[className],
  );
}

const OTHER_TENANT = /t2|S-o5|S-o6|Zed|zed@/;
const HIDDEN = /ssn|S-o\d|email/;

describe('rewritten pipelines evaluated with mingo: tenant rows never leak', () => {
  it('an empty pipeline returns only the tenant rows, without hidden fields or test rows', () => {
    const rows = evaluate('Order', []);
    expect(rows.map((r) => r.objectId).sort()).toEqual(['o1', 'o2', 'o3']);
    expect(JSON.stringify(rows)).not.toMatch(HIDDEN);
  });

  it.each([
    ['asks for the other tenant', [{ $match: { orgId: 't2' } }]],
    ['ORs the other tenant in', [{ $match: { $or: [{ orgId: 't2' }, { status: 'void' }] } }]],
    ['uses $expr to reach it', [{ $match: { $expr: { $eq: ['$orgId', 't2'] } } }]],
  ])('a caller that %s gets no other-tenant row', (_label, pipeline) => {
    const rows = evaluate('Order', pipeline);
    expect(rows.some((r) => r.orgId === 't2')).toBe(false);
    expect(JSON.stringify(rows)).not.toMatch(OTHER_TENANT);
  });

  it('grouping by tenant shows only the caller tenant', () => {
    const rows = evaluate('Order', [{ $group: { _id: '$orgId', total: { $sum: '$amount' } } }]);
    expect(rows).toEqual([{ _id: 't1', total: 35 }]);
  });

  it('whole-document accumulators carry no hidden field', () => {
    const rows = evaluate('Order', [{ $group: { _id: null, docs: { $push: '$$ROOT' } } }]);
    expect(JSON.stringify(rows)).not.toMatch(HIDDEN);
    expect(JSON.stringify(rows)).not.toMatch(OTHER_TENANT);
  });

  it('$unionWith into a scoped class brings in only its tenant rows', () => {
    const rows = evaluate('Tag', [{ $unionWith: { coll: 'Order', pipeline: [{ $match: {} }] } }]);
    expect(rows.map((r) => r.objectId).sort()).toEqual(['g1', 'o1', 'o2', 'o3']);
    expect(JSON.stringify(rows)).not.toMatch(HIDDEN);
  });

  it('$facet branches stay inside the scope', () => {
    const [row] = evaluate('Order', [
      { $facet: { byStatus: [{ $sortByCount: '$status' }], total: [{ $count: 'n' }] } },
    ]);
    expect(row.total).toEqual([{ n: 3 }]);
    expect(JSON.stringify(row)).not.toMatch(/void/);
  });

  it('the auto $limit bounds a pipeline without a terminal $limit', () => {
    const many: Doc[] = Array.from({ length: 250 }, (_, i) => ({
      _id: `t${i}`,
      objectId: `t${i}`,
      name: `n${i}`,
    }));
    const { pipeline, autoLimited } = validatePipeline('Tag', [{ $sort: { name: 1 } }], policy);
    expect(autoLimited).toBe(true);
    expect(new Aggregator(pipeline).run(many)).toHaveLength(200);
  });
});

describe('rewritten $lookup (let + pipeline; hand-computed expectations, mingo is not a faithful oracle here)', () => {
  it('a localField/foreignField join into a scoped class joins only same-tenant rows', () => {
    const rows = evaluate('Order', [
      { $lookup: { from: 'Customer', localField: 'customer', foreignField: 'objectId', as: 'c' } },
      { $project: { customer: 1, names: '$c.name' } },
    ]);
    // o3 (tenant t1) points at c9, a t2 customer: the scope must leave its join empty. (In these
    // API-shaped fixtures objectId is a plain field, so the projection keeps only _id.)
    expect(rows.sort((a, b) => String(a._id).localeCompare(String(b._id)))).toEqual([
      { _id: 'o1', customer: 'c1', names: ['Ada'] },
      { _id: 'o2', customer: 'c1', names: ['Ada'] },
      { _id: 'o3', customer: 'c9', names: [] },
    ]);
  });

  it('joined documents carry only the joined class allowlist', () => {
    const rows = evaluate('Order', [
      { $lookup: { from: 'Customer', pipeline: [], as: 'all' } },
      { $limit: 1 },
    ]);
    expect(rows[0].all).toEqual([{ _id: 'c1', objectId: 'c1', orgId: 't1', name: 'Ada' }]);
    expect(JSON.stringify(rows)).not.toMatch(/email|Zed/);
  });

  it('a join from an unscoped class into a scoped one still sees one tenant', () => {
    const rows = evaluate('Tag', [
      { $lookup: { from: 'Order', pipeline: [{ $group: { _id: '$orgId' } }], as: 'orgs' } },
    ]);
    expect(rows[0].orgs).toEqual([{ _id: 't1' }]);
  });
});

describe('helpers through the validator, evaluated with mingo', () => {
  it('group_by counts only the tenant rows', () => {
    const { pipeline } = validatePipeline(
      'Order',
      buildGroupByPipeline({ field: 'status' }),
      policy,
    );
    const rows = new Aggregator(pipeline).run(orders) as { _id: unknown; value: unknown }[];
    expect(shapeGroupByResult({ className: 'Order', field: 'status', rows }).groups).toEqual([
      { key: 'paid', value: 2 },
      { key: 'open', value: 1 },
    ]);
  });

  it('group_by sum on a hidden value field is refused before it runs', () => {
    expect(() =>
      validatePipeline(
        'Order',
        buildGroupByPipeline({ field: 'status', operation: 'sum', valueField: 'ssn' }),
        policy,
      ),
    ).toThrow(/not readable/);
  });

  it('group_by_date by month in UTC', () => {
    const { pipeline } = validatePipeline(
      'Order',
      buildGroupByDatePipeline({
        field: 'createdAt',
        interval: 'month',
        operation: 'sum',
        valueField: 'amount',
      }),
      policy,
    );
    const rows = new Aggregator(pipeline).run(orders) as { _id: unknown; value: unknown }[];
    const out = shapeGroupByDateResult({
      className: 'Order',
      field: 'createdAt',
      interval: 'month',
      operation: 'sum',
      rows,
    });
    expect(out.groups).toEqual([
      { key: '2024-01', value: 30 },
      { key: '2024-02', value: 5 },
    ]);
  });

  it.each([
    ['year', [['2024', 3]]],
    ['quarter', [['2024-Q1', 3]]],
    [
      'month',
      [
        ['2024-01', 2],
        ['2024-02', 1],
      ],
    ],
    [
      'week',
      [
        ['2024-W01', 1],
        ['2024-W03', 1],
        ['2024-W05', 1],
      ],
    ],
    [
      'day',
      [
        ['2024-01-05', 1],
        ['2024-01-20', 1],
        ['2024-02-01', 1],
      ],
    ],
    [
      'hour',
      [
        ['2024-01-05 10:00', 1],
        ['2024-01-20 10:00', 1],
        ['2024-02-01 10:00', 1],
      ],
    ],
    [
      'minute',
      [
        ['2024-01-05 10:00', 1],
        ['2024-01-20 10:00', 1],
        ['2024-02-01 10:00', 1],
      ],
    ],
    [
      'second',
      [
        ['2024-01-05 10:00:00', 1],
        ['2024-01-20 10:00:00', 1],
        ['2024-02-01 10:00:00', 1],
      ],
    ],
  ] as const)('group_by_date by %s counts the tenant rows per bucket', (interval, expected) => {
    const { pipeline } = validatePipeline(
      'Order',
      buildGroupByDatePipeline({ field: 'createdAt', interval }),
      policy,
    );
    const rows = new Aggregator(pipeline).run(orders) as { _id: unknown; value: unknown }[];
    const out = shapeGroupByDateResult({ className: 'Order', field: 'createdAt', interval, rows });
    expect(out.groups).toEqual(expected.map(([key, value]) => ({ key, value })));
  });

  it('distinct lists only the tenant values', () => {
    const { pipeline } = validatePipeline(
      'Order',
      buildDistinctPipeline({ field: 'status', sort: 'asc' }),
      policy,
    );
    const rows = new Aggregator(pipeline).run(orders) as { _id: unknown }[];
    expect(shapeDistinctResult({ className: 'Order', field: 'status', rows }).values).toEqual([
      'open',
      'paid',
    ]);
  });
});
