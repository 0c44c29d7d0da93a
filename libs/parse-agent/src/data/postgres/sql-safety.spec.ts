import { ParseAgentError } from '../../core/errors';
import { countSql } from './count-sql';
import { distinctSql } from './distinct-sql';
import { groupByDateSql } from './group-by-date-sql';
import { groupBySql } from './group-by-sql';
import { quoteIdent } from './pg-identifiers';
import { compilePipeline } from './pipeline-to-sql';
import type { SqlContext } from './scoped-source';
import { selectSql } from './select-sql';
import type { SqlQuery } from './sql-params';

/** Strings an agent might send to break out of a value or an identifier. */
const HOSTILE: unknown[] = [
  `'; DROP TABLE "_User"; --`,
  `" OR 1=1 --`,
  `a"b`,
  `x'y`,
  `\\' OR '1'='1`,
  `\\"; SELECT pg_sleep(10)`,
  '$1',
  '$$ OR TRUE $$',
  '日本語ǅ\u202e',
  '\u0000nul',
  'name; DELETE FROM "Order"',
  '__proto__',
  'constructor',
  '$where',
  'a.b.c',
  '9'.repeat(400),
  1e308,
  -1e308,
  2 ** 64,
  Infinity,
  NaN,
  -0,
  { $gt: '' },
  ['x', "'y"],
];

const ctx: SqlContext = {
  schemas: {
    Order: {
      className: 'Order',
      fields: {
        status: { type: 'String' },
        amount: { type: 'Number' },
        placedAt: { type: 'Date' },
        customer: { type: 'Pointer', targetClass: 'Customer' },
        tags: { type: 'Array' },
        meta: { type: 'Object' },
      },
    },
    Customer: { className: 'Customer', fields: { tier: { type: 'String' } } },
  },
  scopeFor: () => ({ principals: ['u1'], where: { amount: { $gte: 0 } } }),
  columnsFor: (c) =>
    c === 'Order'
      ? ['objectId', 'createdAt', 'status', 'amount', 'placedAt', 'customer', 'tags', 'meta']
      : ['objectId', 'tier'],
};

/** The security properties every compiled query has, whatever went in. */
function expectSafe(q: SqlQuery, hostile: unknown): void {
  expect(q.text).not.toMatch(/;|--|\/\*/);
  const used = new Set([...q.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  for (const n of used) expect(n).toBeLessThanOrEqual(q.values.length);
  for (let n = 1; n <= q.values.length; n++) expect(used.has(n)).toBe(true);
  if (typeof hostile === 'string' && hostile.length >= 3) {
    // A plain word may come back only as a validated, quoted output name (`"constructor"`).
    const bare = q.text.replaceAll(`"${hostile}"`, '');
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(hostile)) expect(bare).not.toContain(hostile);
    else expect(q.text).not.toContain(hostile);
  }
  // Every class read is row-ACL filtered.
  const reads = [...q.text.matchAll(/FROM "([^"]+)" AS (b\d+) WHERE (.{0,80})/g)];
  expect(reads.length).toBeGreaterThan(0);
  for (const [, , alias, rest] of reads) {
    expect(rest.startsWith(`(${alias}."_rperm" IS NULL OR ${alias}."_rperm" && $`)).toBe(true);
  }
}

/** Compiles; a refusal must be one of the library's own errors, never a crash or raw SQL. */
function check(build: () => SqlQuery, hostile: unknown): 'bound' | 'refused' {
  let q: SqlQuery;
  try {
    q = build();
  } catch (error) {
    expect(error).toBeInstanceOf(ParseAgentError);
    return 'refused';
  }
  expectSafe(q, hostile);
  return 'bound';
}

const slots: Record<string, (h: unknown) => SqlQuery> = {
  'where value': (h) => countSql({ className: 'Order', where: { status: h } }, ctx),
  'where $in value': (h) => countSql({ className: 'Order', where: { status: { $in: [h] } } }, ctx),
  'where number': (h) => countSql({ className: 'Order', where: { amount: { $gt: h } } }, ctx),
  'where date': (h) =>
    countSql({ className: 'Order', where: { placedAt: { $lt: { __type: 'Date', iso: h } } } }, ctx),
  'where pointer': (h) =>
    countSql({ className: 'Order', where: { customer: { __type: 'Pointer', objectId: h } } }, ctx),
  'where regex': (h) => countSql({ className: 'Order', where: { status: { $regex: h } } }, ctx),
  'where array': (h) => countSql({ className: 'Order', where: { tags: { $all: [h] } } }, ctx),
  'where json path value': (h) => countSql({ className: 'Order', where: { 'meta.x': h } }, ctx),
  'where json path key': (h) => countSql({ className: 'Order', where: { [`meta.${h}`]: 1 } }, ctx),
  'where field name': (h) => countSql({ className: 'Order', where: { [String(h)]: 1 } }, ctx),
  'where operator': (h) =>
    countSql({ className: 'Order', where: { status: { [`$${h}`]: 1 } } }, ctx),
  'where top-level key': (h) => countSql({ className: 'Order', where: { [`$${h}`]: [] } }, ctx),
  'scope where value': (h) =>
    countSql({ className: 'Order' }, { ...ctx, scopeFor: () => ({ where: { status: h } }) }),
  principal: (h) =>
    countSql({ className: 'Order' }, { ...ctx, scopeFor: () => ({ principals: [h as string] }) }),
  'class name': (h) => countSql({ className: h as string }, ctx),
  'group field': (h) => groupBySql({ className: 'Order', field: h as string }, ctx),
  'group value field': (h) =>
    groupBySql(
      { className: 'Order', field: 'status', accumulator: 'sum', valueField: h as string },
      ctx,
    ),
  accumulator: (h) =>
    groupBySql(
      { className: 'Order', field: 'status', accumulator: h as never, valueField: 'amount' },
      ctx,
    ),
  'group limit': (h) =>
    groupBySql({ className: 'Order', field: 'status', limit: h as number }, ctx),
  interval: (h) => groupByDateSql({ className: 'Order', interval: h as never }, ctx),
  'time zone': (h) =>
    groupByDateSql({ className: 'Order', interval: 'day', timeZone: h as string }, ctx),
  'distinct field': (h) => distinctSql({ className: 'Order', field: h as string }, ctx),
  'select column': (h) => selectSql({ className: 'Order', columns: [h as string], limit: 1 }, ctx),
  'select order': (h) => selectSql({ className: 'Order', order: `-${h}`, limit: 1 }, ctx),
  'select offset': (h) => selectSql({ className: 'Order', limit: 1, offset: h as number }, ctx),
  'pipeline stage': (h) => compilePipeline('Order', [{ [`$${h}`]: {} }], ctx),
  '$match value': (h) => compilePipeline('Order', [{ $match: { status: h } }], ctx),
  '$group output name': (h) =>
    compilePipeline('Order', [{ $group: { _id: null, [String(h)]: { $sum: 1 } } }], ctx),
  '$group _id key': (h) =>
    compilePipeline('Order', [{ $group: { _id: { [String(h)]: '$status' } } }], ctx),
  '$group _id ref': (h) => compilePipeline('Order', [{ $group: { _id: `$${h}` } }], ctx),
  '$sum constant': (h) =>
    compilePipeline('Order', [{ $group: { _id: null, n: { $sum: h } } }], ctx),
  '$sort key': (h) => compilePipeline('Order', [{ $sort: { [String(h)]: 1 } }], ctx),
  $limit: (h) => compilePipeline('Order', [{ $limit: h }], ctx),
  '$project rename': (h) =>
    compilePipeline('Order', [{ $project: { [String(h)]: '$status' } }], ctx),
  '$project source': (h) => compilePipeline('Order', [{ $project: { s: `$meta.${h}` } }], ctx),
  '$count name': (h) => compilePipeline('Order', [{ $count: h }], ctx),
  '$unwind path': (h) => compilePipeline('Order', [{ $unwind: `$${h}` }], ctx),
  '$lookup from': (h) =>
    compilePipeline(
      'Order',
      [{ $lookup: { from: h, localField: 'customer', foreignField: 'objectId', as: 'c' } }],
      ctx,
    ),
  '$lookup as': (h) =>
    compilePipeline(
      'Order',
      [{ $lookup: { from: 'Customer', localField: 'customer', foreignField: 'objectId', as: h } }],
      ctx,
    ),
};

describe('SQL safety: every argument that reaches SQL is refused or bound', () => {
  for (const [slot, build] of Object.entries(slots)) {
    it(`${slot}: hostile input never reaches the SQL text`, () => {
      for (const hostile of HOSTILE) check(() => build(hostile), hostile);
    });
  }

  it('binds hostile values where a value belongs (not just refuses everything)', () => {
    expect(check(() => slots['where value'](`'; DROP TABLE "_User"; --`), '')).toBe('bound');
    expect(check(() => slots.principal(`role:x' OR '1'='1`), '')).toBe('bound');
    expect(check(() => slots['where json path key'](`x'); DROP`), `x'); DROP`)).toBe('bound');
    expect(check(() => slots['time zone']('UTC'), '')).toBe('bound');
  });

  it('quotes schema-supplied identifiers with doubled quotes', () => {
    expect(quoteIdent('a"b')).toBe('"a""b"');
    expect(quoteIdent('_Join:users:_Role')).toBe('"_Join:users:_Role"');
    expect(() => quoteIdent('a\u0000b')).toThrow();
    const odd: SqlContext = {
      schemas: { 'We"ird': { className: 'We"ird', fields: { 'f"x': { type: 'String' } } } },
      scopeFor: () => ({}),
      columnsFor: () => ['f"x'],
    };
    const q = countSql({ className: 'We"ird', where: { 'f"x': 'v' } }, odd);
    expect(q.text).toContain('FROM "We""ird" AS b1');
    expect(q.text).toContain('t2."f""x" = $2::text');
  });
});
