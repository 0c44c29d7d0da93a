import { autoLimitNotice, needsAutoLimit } from './auto-limit';

describe('needsAutoLimit', () => {
  it.each([
    [[], true],
    [[{ $sort: { a: 1 } }], true],
    [[{ $limit: 5 }, { $project: { a: 1 } }], true],
    [[{ $group: { _id: '$a' } }], true],
    [[{ $limit: 5 }], false],
    [[{ $count: 'n' }], false],
    [[{ $group: { _id: null, n: { $sum: 1 } } }], false],
  ])('%j -> %s', (pipeline, expected) => {
    expect(needsAutoLimit(pipeline)).toBe(expected);
  });
});

describe('autoLimitNotice', () => {
  it('adds the envelope keys only when the cap was appended and reached', () => {
    expect(autoLimitNotice(true, 200, 200)).toMatchObject({ auto_limited: true, auto_limit: 200 });
    expect(autoLimitNotice(true, 200, 200)?.hint).toMatch(/\$limit/);
    expect(autoLimitNotice(true, 200, 6)).toBeUndefined();
    expect(autoLimitNotice(false, 200, 500)).toBeUndefined();
  });
});
