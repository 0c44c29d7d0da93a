import { InvalidQueryError } from '../../core/errors';
import { compilePipeline } from './pipeline-to-sql';
import type { SqlContext } from './scoped-source';

const ctx: SqlContext = {
  schemas: {
    Order: {
      className: 'Order',
      fields: {
        status: { type: 'String' },
        amount: { type: 'Number' },
        customer: { type: 'Pointer', targetClass: 'Customer' },
        tags: { type: 'Array' },
        secret: { type: 'String' },
        placedAt: { type: 'Date' },
        isDeleted: { type: 'Boolean' },
      },
    },
    Customer: {
      className: 'Customer',
      fields: { tier: { type: 'String' }, pin: { type: 'String' } },
    },
  },
  scopeFor: (c) => ({
    principals: ['u1'],
    where: c === 'Order' ? { status: { $ne: 'void' } } : {},
  }),
  columnsFor: (c) =>
    c === 'Order'
      ? ['objectId', 'status', 'amount', 'customer', 'tags', 'placedAt', 'isDeleted']
      : ['objectId', 'tier'],
};

describe('compilePipeline', () => {
  it('starts from the scoped base class: ACL, scope where, visible columns only', () => {
    const q = compilePipeline('Order', [], ctx);
    expect(q.text).toMatch(
      /FROM "Order" AS b1 WHERE \(b1\."_rperm" IS NULL OR b1\."_rperm" && \$1::text\[\]\) AND \(b1\."status" IS DISTINCT FROM \$2::text\)/,
    );
    expect(q.text).not.toContain('secret');
    expect(q.values).toEqual([['*', 'u1'], 'void']);
  });

  it('scopes every looked-up class and selects only its visible columns', () => {
    const q = compilePipeline(
      'Order',
      [
        {
          $lookup: { from: 'Customer', localField: 'customer', foreignField: 'objectId', as: 'c' },
        },
        { $unwind: '$c' },
        { $group: { _id: '$c.tier', total: { $sum: '$amount' }, n: { $sum: 1 } } },
      ],
      ctx,
    );
    expect(q.text).toMatch(
      /FROM "Customer" AS b\d+ WHERE \(b\d+\."_rperm" IS NULL OR b\d+\."_rperm" && \$\d+::text\[\]\)/,
    );
    expect(q.text).not.toContain('pin');
    expect(q.text).toContain('jsonb_agg(');
    expect(q.text).toContain('jsonb_build_object(');
    expect(q.text).toContain('GROUP BY');
    expect(q.values).toContainEqual(['tier']);
  });

  it('carries $sort order through $skip/$limit/$project with a hidden row number', () => {
    const q = compilePipeline(
      'Order',
      [
        { $sort: { amount: -1 } },
        { $skip: 1 },
        { $limit: 2 },
        { $project: { amount: 1, s: '$status' } },
      ],
      ctx,
    );
    expect(q.text).toContain('row_number() OVER (ORDER BY s2."amount" DESC NULLS LAST) AS "__ord"');
    expect(q.text).toMatch(/ORDER BY s\d+\."__ord" OFFSET \$\d+/);
    expect(q.text).toMatch(/ORDER BY s\d+\."__ord" LIMIT \$\d+/);
    expect(q.text).toMatch(/"status" AS "s"/);
    expect(q.values).toEqual(expect.arrayContaining([1, 2]));
  });

  it('returns no row for $count and key-less $group over empty input (HAVING count > 0)', () => {
    expect(compilePipeline('Order', [{ $count: 'n' }], ctx).text).toContain('HAVING count(*) > 0');
    expect(
      compilePipeline('Order', [{ $group: { _id: null, t: { $max: '$amount' } } }], ctx).text,
    ).toContain('HAVING count(*) > 0');
  });

  it('refuses other stages, listing the supported ones', () => {
    for (const stage of [
      { $out: 'x' },
      { $merge: 'x' },
      { $graphLookup: {} },
      { $function: {} },
      { $sample: { size: 1 } },
    ]) {
      expect(() => compilePipeline('Order', [stage], ctx)).toThrow(
        /Supported stages: \$match, \$group, \$sort, \$limit, \$skip, \$project, \$addFields/,
      );
    }
    // The refusal names the nearest way to the same answer.
    expect(() => compilePipeline('Order', [{ $sample: { size: 1 } }], ctx)).toThrow(
      /Instead, use \$sort on a field and \$limit/,
    );
    expect(() =>
      compilePipeline(
        'Order',
        [{ $bucketAuto: { groupBy: '$amount', buckets: 2, granularity: 'R5' } }],
        ctx,
      ),
    ).toThrow(/granularity is not supported on the PostgreSQL path: omit it/);
    expect(() => compilePipeline('Order', [{ $match: {}, $limit: 1 }], ctx)).toThrow(
      InvalidQueryError,
    );
  });

  it('compiles $bucketAuto with the bucket count bound as a parameter', () => {
    const q = compilePipeline(
      'Order',
      [{ $bucketAuto: { groupBy: '$amount', buckets: 4, output: { n: { $sum: 1 } } } }],
      ctx,
    );
    expect(q.text).toContain('WITH RECURSIVE');
    expect(q.values).toContain(4);
    expect(Object.keys(q.fields)).toEqual(['_id', 'n']);
    for (const bad of [0, 1.5, '3', -1]) {
      expect(() =>
        compilePipeline('Order', [{ $bucketAuto: { groupBy: '$amount', buckets: bad } }], ctx),
      ).toThrow(/buckets must be a whole number/);
    }
    expect(() =>
      compilePipeline(
        'Order',
        [{ $bucketAuto: { groupBy: '$amount', buckets: 2, output: { __bmin: { $sum: 1 } } } }],
        ctx,
      ),
    ).toThrow(/is not allowed/);
  });

  it('numbers $setWindowFields rows for their order only when a later stage can see it', () => {
    const win = {
      $setWindowFields: {
        partitionBy: '$status',
        sortBy: { amount: -1 },
        output: { r: { $rank: {} } },
      },
    };
    const numbered = (stages: unknown[]) =>
      (compilePipeline('Order', stages, ctx).text.match(/row_number\(\)/g) ?? []).length;
    expect(numbered([win])).toBe(1);
    expect(numbered([win, { $match: { r: 1 } }, { $limit: 3 }])).toBe(1);
    expect(numbered([win, { $group: { _id: '$status', f: { $first: '$r' } } }])).toBe(1);
    expect(
      numbered([win, { $match: { r: 1 } }, { $group: { _id: '$status', n: { $sum: 1 } } }]),
    ).toBe(0);
    expect(numbered([win, { $count: 'n' }])).toBe(0);
  });

  it('keeps window ranks bigint so a $match on them can stop the window early', () => {
    const win = {
      $setWindowFields: {
        partitionBy: '$status',
        sortBy: { amount: -1 },
        output: { r: { $rank: {} }, d: { $denseRank: {} }, n: { $documentNumber: {} } },
      },
    };
    const top = compilePipeline('Order', [win, { $match: { r: 1, d: { $lte: 2 } } }], ctx);
    for (const fn of ['rank()', 'dense_rank()', 'row_number()'])
      expect(top.text).toContain(`${fn} OVER (PARTITION BY`);
    expect(top.text).not.toMatch(/(rank|row_number)\(\) OVER \([^)]*\)::float8/);
    // Integers are compared as bigint (a run condition for PostgreSQL), not through a float8 cast.
    expect(top.text).toMatch(/"r" = \$\d+::bigint/);
    expect(top.text).toMatch(/"d" <= \$\d+::bigint/);
    // The answer still carries every Number as float8 (node-postgres reads a bigint as a string).
    expect(top.text).toMatch(
      /^SELECT .*"r"::float8 AS "r", .*"d"::float8 AS "d", .*"n"::float8 AS "n"/,
    );
    // A fraction is compared as double precision: 1.5 matches no rank.
    const frac = compilePipeline('Order', [win, { $match: { r: { $lt: 1.5 } } }], ctx);
    expect(frac.text).toMatch(/"r" < \$\d+::double precision/);
    // Expressions read a rank as float8: a ratio of two ranks is not an integer division.
    const ratio = compilePipeline(
      'Order',
      [win, { $project: { q: { $divide: ['$n', '$r'] }, r: 1 } }, { $match: { r: 2 } }],
      ctx,
    );
    expect(ratio.text).toMatch(/"n"::float8/);
    expect(ratio.text).toMatch(/"r"::float8/);
    expect(ratio.text).not.toMatch(/\/ s\d+\."r"[^:]/);
    // An included rank stays bigint through $project, so the $match after it still stops early.
    expect(ratio.text).toMatch(/"r" = \$\d+::bigint/);
    // Other window outputs stay float8 as before.
    const running = compilePipeline(
      'Order',
      [{ $setWindowFields: { sortBy: { amount: 1 }, output: { c: { $count: {} } } } }],
      ctx,
    );
    expect(running.text).toContain('::float8 AS "c"');
  });

  it('refuses $lookup other than along a pointer, and hidden or unknown fields', () => {
    const bad = [
      { $lookup: { from: 'Customer', localField: 'status', foreignField: 'objectId', as: 'c' } },
      { $lookup: { from: 'Customer', localField: 'customer', foreignField: 'tier', as: 'c' } },
      {
        $lookup: {
          from: 'Customer',
          localField: 'customer',
          foreignField: 'objectId',
          as: 'c',
          pipeline: [],
        },
      },
      { $lookup: { from: 'Nope', localField: 'customer', foreignField: 'objectId', as: 'c' } },
    ];
    for (const stage of bad) expect(() => compilePipeline('Order', [stage], ctx)).toThrow();
    expect(() => compilePipeline('Order', [{ $group: { _id: '$secret' } }], ctx)).toThrow(
      /unknown field/,
    );
    expect(() => compilePipeline('Order', [{ $project: { secret: 1 } }], ctx)).toThrow(
      /unknown field/,
    );
    expect(() => compilePipeline('Order', [{ $sort: { secret: 1 } }], ctx)).toThrow(
      /unknown field/,
    );
  });

  it('refuses unsupported accumulators and expression operators, naming the supported ones', () => {
    expect(() =>
      compilePipeline('Order', [{ $group: { _id: null, f: { $topN: '$amount' } } }], ctx),
    ).toThrow(/\$sum, \$avg, \$min, \$max, \$count, \$first/);
    expect(() =>
      compilePipeline('Order', [{ $group: { _id: null, f: { $sum: '$status' } } }], ctx),
    ).toThrow(/adds numbers/);
    expect(() =>
      compilePipeline('Order', [{ $project: { x: { $function: { body: 'x' } } } }], ctx),
    ).toThrow(/'\$function' is not supported on the PostgreSQL path. Supported: .*\$add/);
    expect(() => compilePipeline('Order', [{ $project: { x: '$$ROOT' } }], ctx)).toThrow(
      /whole row/,
    );
    expect(() => compilePipeline('Order', [{ $project: { amount: 1, status: 0 } }], ctx)).toThrow(
      /cannot mix/,
    );
  });

  it("never lists the class's own columns in a refusal: this path does not know the allowlist", () => {
    // isDeleted is visible to this reader but may be outside the agent's allowlist; secret is protected.
    for (const pipeline of [
      [{ $group: { _id: '$secret' } }],
      [{ $match: { secret: 'x' } }],
      [{ $sort: { nosuch: 1 } }],
    ]) {
      let message = '';
      try {
        compilePipeline('Order', pipeline, ctx);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/get_schema lists the fields you can use/);
      expect(message).not.toMatch(/isDeleted|status|protected/);
    }
  });

  it('lists the fields a $project or $group set, which come from what the agent may read', () => {
    const projected = [{ $project: { objectId: 1, status: 1, amount: 1 } }];
    expect(() => compilePipeline('Order', [...projected, { $sort: { secret: 1 } }], ctx)).toThrow(
      /Fields at this stage: objectId, status, amount\./,
    );
    expect(() =>
      compilePipeline(
        'Order',
        [...projected, { $group: { _id: '$status', n: { $sum: 1 } } }, { $match: { x: 1 } }],
        ctx,
      ),
    ).toThrow(/Fields you can filter on: _id, n\./);
  });

  it.each(['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second'])(
    'groups by { $dateTrunc: { unit: %s } } (the group_by_date pipeline)',
    (unit) => {
      const trunc: Record<string, unknown> = { date: '$placedAt', unit, timezone: 'Europe/Lisbon' };
      if (unit === 'week') trunc.startOfWeek = 'monday';
      const q = compilePipeline(
        'Order',
        [
          { $group: { _id: { $dateTrunc: trunc }, value: { $sum: 1 } } },
          { $sort: { _id: 1 } },
          { $limit: 10 },
        ],
        ctx,
      );
      expect(q.text).toContain(
        unit === 'week' ? `date_trunc('day', (s` : `date_trunc('${unit}', (s`,
      );
      expect(q.values).toContain('Europe/Lisbon');
      expect(q.fields).toEqual({ _id: { type: 'Date' }, value: { type: 'Number' } });
    },
  );

  it('refuses $dateTrunc shapes it cannot compute as MongoDB does', () => {
    const group = (trunc: unknown) => [{ $group: { _id: { $dateTrunc: trunc } } }];
    const cases: Array<[unknown, RegExp]> = [
      [{ date: '$placedAt', unit: 'week', startOfWeek: 'someday' }, /startOfWeek must be a day/],
      [{ date: '$placedAt', unit: 'day', binSize: 2 }, /binSize other than 1 is not supported/],
      [{ date: '$placedAt', unit: 'fortnight' }, /unit must be one of/],
      [{ date: '$placedAt', unit: 'day', timezone: "x'; --" }, /Unknown time zone/],
      [{ date: '$status', unit: 'day' }, /needs a Date/],
      [{ date: '$secret', unit: 'day' }, /unknown field/],
    ];
    for (const [trunc, message] of cases) {
      expect(() => compilePipeline('Order', group(trunc), ctx)).toThrow(message);
    }
  });
  it('tracks fields forward: what a stage made can be sorted and matched, what one removed cannot', () => {
    const made = compilePipeline(
      'Order',
      [
        { $addFields: { double: { $multiply: ['$amount', 2] } } },
        { $match: { double: { $gt: 10 } } },
        { $sort: { double: -1 } },
        { $group: { _id: '$status', top: { $max: '$double' } } },
        { $match: { top: { $gte: 20 } } },
        { $sort: { top: 1 } },
      ],
      ctx,
    );
    expect(made.fields).toEqual({ _id: { type: 'String' }, top: { type: 'Number' } });
    for (const pipeline of [
      [{ $unset: 'amount' }, { $sort: { amount: 1 } }],
      [{ $project: { status: 1 } }, { $match: { amount: 5 } }],
      [{ $group: { _id: '$status' } }, { $addFields: { x: '$amount' } }],
      [{ $replaceRoot: { newRoot: { s: '$status' } } }, { $sort: { status: 1 } }],
      [{ $facet: { a: [{ $count: 'n' }] } }, { $match: { status: 'paid' } }],
    ]) {
      expect(() => compilePipeline('Order', pipeline, ctx)).toThrow(/unknown field|Unknown field/);
    }
  });

  it('binds every value of an expression, whatever the operator does with it', () => {
    const q = compilePipeline(
      'Order',
      [
        {
          $project: {
            a: { $isArray: "x'); DROP TABLE x; --" },
            b: { $dateToString: { date: '$placedAt', format: '%Y', timezone: 'Europe/Lisbon' } },
            c: { $concat: ['$status', "'; --"] },
          },
        },
      ],
      ctx,
    );
    expect(q.text).not.toContain('DROP');
    expect(q.text).not.toContain("'; --");
    const used = new Set([...q.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    for (let n = 1; n <= q.values.length; n++) expect(used.has(n)).toBe(true);
  });
});
