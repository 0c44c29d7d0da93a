import { Aggregator } from 'mingo';
import { AgentValidationError } from '../core/errors';
import type { DataPrincipals } from '../ports/data-path';
import {
  buildParseMongoFixture,
  readableBy,
  type StorageDoc,
} from '../../../../test/fixtures/parse-mongo-fixture';
import {
  aclReadMatchStage,
  aclReadSqlClause,
  aclWriteMatchStage,
  aclWriteSqlClause,
  type AclMatchStage,
} from './acl-match';

/**
 * The ACL helpers for custom tools. No MongoDB server runs here: the `$match` stages are evaluated
 * with mingo over documents in Parse-on-MongoDB storage shape and compared with an oracle written
 * from Parse's rule. The SQL clauses run against the real PostgreSQL in
 * test/agent/acl-helpers.spec.ts; here only their shape and input checks.
 */
const as = (...principals: string[]): DataPrincipals => ({ master: false, principals });

const ids = (docs: StorageDoc[], stage: AclMatchStage | undefined): string[] =>
  new Aggregator(stage ? [{ ...stage }] : [])
    .run(docs)
    .map((d) => String((d as StorageDoc)._id))
    .sort();

/** Parse's rule: no ACL column (missing or null) is public; else `*` or a principal must be named. */
const oracle = (docs: StorageDoc[], column: string, principals: string[]): string[] =>
  docs
    .filter((d) => {
      const perm = d[column] as string[] | null | undefined;
      if (perm === undefined || perm === null) return true;
      return perm.some((p) => p === '*' || principals.includes(p));
    })
    .map((d) => String(d._id))
    .sort();

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const UNIVERSE = ['*', 'u1', 'u2', 'u3', 'role:a', 'role:b', 'role:c', '$ne', 'a.b', 'role:'];

function randomDocs(random: () => number, count: number): StorageDoc[] {
  const pick = (): string[] | null | undefined => {
    const r = random();
    if (r < 0.1) return undefined;
    if (r < 0.15) return null;
    if (r < 0.2) return [];
    return UNIVERSE.filter(() => random() < 0.25);
  };
  return Array.from({ length: count }, (_, i) => {
    const doc: StorageDoc = { _id: `d${i}`, title: `row ${i}` };
    const rperm = pick();
    const wperm = pick();
    if (rperm !== undefined) doc._rperm = rperm;
    if (wperm !== undefined) doc._wperm = wperm;
    return doc;
  });
}

describe('aclReadMatchStage / aclWriteMatchStage (evaluated with mingo)', () => {
  const fixture = buildParseMongoFixture();
  const orders = fixture.collections.Order;

  it.each([
    ['an anonymous scope', ['*']],
    ['alice with her roles', ['*', 'u_alice', 'role:staff']],
    ['a manager role (inheriting staff)', ['*', 'role:manager', 'role:staff']],
    ['bob alone', ['u_bob']],
  ])('keeps exactly the fixture orders %s may read', (_name, principals) => {
    const expected = orders
      .filter((d) => readableBy(d, ['*', ...principals]))
      .map((d) => String(d._id))
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(orders.length);
    expect(ids(orders, aclReadMatchStage(as(...principals)))).toEqual(expected);
  });

  it('agrees with Parse’s rule on 2,000 random documents and principal sets, for read and write', () => {
    const random = prng(20261124);
    for (let round = 0; round < 40; round++) {
      const docs = randomDocs(random, 50);
      const principals = UNIVERSE.filter((p) => p !== '*' && random() < 0.3);
      const who = as(...principals);
      expect(ids(docs, aclReadMatchStage(who))).toEqual(oracle(docs, '_rperm', principals));
      expect(ids(docs, aclWriteMatchStage(who))).toEqual(oracle(docs, '_wperm', principals));
    }
  });

  it('treats a missing or null ACL column as public and an empty one as nobody’s', () => {
    const docs = [
      { _id: 'missing' },
      { _id: 'null', _rperm: null },
      { _id: 'empty', _rperm: [] },
      { _id: 'other', _rperm: ['u9'] },
      { _id: 'star', _rperm: ['*'] },
    ];
    expect(ids(docs, aclReadMatchStage(as('u1')))).toEqual(['missing', 'null', 'star']);
  });

  it('always matches `*`, even when the principals leave it out, and never repeats one', () => {
    expect(aclReadMatchStage(as('u1', 'u1', 'role:a'))).toEqual({
      $match: { _rperm: { $in: [null, '*', 'u1', 'role:a'] } },
    });
    expect(aclWriteMatchStage(as())).toEqual({ $match: { _wperm: { $in: [null, '*'] } } });
  });

  it('reads principals as literals: operator-like names match nothing else', () => {
    const docs = [
      { _id: 'x', _rperm: ['u1'] },
      { _id: 'ne', _rperm: ['$ne'] },
    ];
    expect(ids(docs, aclReadMatchStage(as('$ne')))).toEqual(['ne']);
    expect(ids(docs, aclReadMatchStage(as('u1.x')))).toEqual([]);
  });

  it('gives no stage for the master key (no row ACL applies), as Parse does', () => {
    expect(aclReadMatchStage({ master: true })).toBeUndefined();
    expect(aclWriteMatchStage({ master: true })).toBeUndefined();
  });

  it('builds a fresh stage each time: changing one does not widen the next', () => {
    const first = aclReadMatchStage(as('u1'))!;
    first.$match._rperm.$in.push('role:admin');
    expect(aclReadMatchStage(as('u1'))!.$match._rperm.$in).not.toContain('role:admin');
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a bare array', ['u1']],
    ['no master flag', { principals: ['u1'] }],
    ['master: false without principals', { master: false }],
    ['principals as a string', { master: false, principals: 'u1' }],
    ['an empty principal', { master: false, principals: [''] }],
    ['an operator object', { master: false, principals: [{ $ne: null }] }],
    ['a number', { master: false, principals: [1] }],
    ['master: "true"', { master: 'true' }],
  ])('refuses %s instead of returning no filter', (_name, input) => {
    expect(() => aclReadMatchStage(input as never)).toThrow(AgentValidationError);
    expect(() => aclWriteSqlClause(input as never)).toThrow(AgentValidationError);
  });
});

describe('aclReadSqlClause / aclWriteSqlClause (shape and input checks)', () => {
  it('builds a parameterized overlap test with NULL as public', () => {
    expect(aclReadSqlClause(as('u1', 'role:a'))).toEqual({
      text: '("_rperm" IS NULL OR "_rperm" && $1::text[])',
      values: [['*', 'u1', 'role:a']],
    });
    expect(aclWriteSqlClause(as('u1'), { alias: 'o', firstParam: 3 })).toEqual({
      text: '("o"."_wperm" IS NULL OR "o"."_wperm" && $3::text[])',
      values: [['*', 'u1']],
    });
  });

  it('puts principals only in parameters, never in the text', () => {
    const clause = aclReadSqlClause(as("x' OR TRUE --", 'role:"a"'));
    expect(clause.text).not.toContain('OR TRUE');
    expect(clause.text).not.toContain('role:');
    expect(clause.values[0]).toContain("x' OR TRUE --");
  });

  it('gives TRUE with no parameters for the master key', () => {
    expect(aclReadSqlClause({ master: true }, { alias: 't', firstParam: 4 })).toEqual({
      text: 'TRUE',
      values: [],
    });
  });

  it.each([
    ['a quoted alias', { alias: 'o"; DROP TABLE x; --' }],
    ['an alias with a dot', { alias: 'a.b' }],
    ['an empty alias', { alias: '' }],
    ['placeholder 0', { firstParam: 0 }],
    ['a fractional placeholder', { firstParam: 1.5 }],
    ['a string placeholder', { firstParam: '2' }],
  ])('refuses %s', (_name, options) => {
    expect(() => aclReadSqlClause(as('u1'), options as never)).toThrow(AgentValidationError);
  });
});
