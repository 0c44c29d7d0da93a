import { andWhere, composeWhere } from './where-composer';

describe('composeWhere', () => {
  const caller = { status: 'open' };
  const canonical = { isDeleted: { $ne: true } };
  const perClass = { region: 'eu' };
  const defaultFilter = { archived: false };
  const tenant = { tenantId: 't1' };

  it('returns an empty where when there are no layers', () => {
    expect(composeWhere({})).toEqual({});
    expect(
      composeWhere({
        caller: {},
        canonical: undefined,
        perClass: {},
        defaultFilter: {},
        tenant: {},
      }),
    ).toEqual({});
  });

  it('returns a single non-empty layer as is, without wrapping it in $and', () => {
    expect(composeWhere({ caller })).toBe(caller);
    expect(composeWhere({ tenant })).toBe(tenant);
    expect(composeWhere({ caller: {}, canonical, tenant: {} })).toBe(canonical);
  });

  it('ANDs the layers in the fixed order caller, canonical, per-class, default, tenant', () => {
    // Object key order of the input must not matter.
    const out = composeWhere({ tenant, defaultFilter, perClass, canonical, caller });
    expect(out).toEqual({ $and: [caller, canonical, perClass, defaultFilter, tenant] });
    expect(Object.keys(out)).toEqual(['$and']);
  });

  it('drops empty and missing layers but keeps the order of the others', () => {
    expect(composeWhere({ caller: {}, canonical, defaultFilter, tenant })).toEqual({
      $and: [canonical, defaultFilter, tenant],
    });
    expect(composeWhere({ caller, tenant })).toEqual({ $and: [caller, tenant] });
  });

  it('never merges layers, so a caller cannot override another layer on the same field', () => {
    const out = composeWhere({ caller: { tenantId: 't2' }, tenant });
    expect(out).toEqual({ $and: [{ tenantId: 't2' }, { tenantId: 't1' }] });
  });

  it('keeps a caller $and nested in its own position and leaves the layers unmutated', () => {
    const nested = { $and: [{ a: 1 }, { b: 2 }] };
    const out = composeWhere({ caller: nested, tenant });
    expect(out).toEqual({ $and: [nested, tenant] });
    expect(nested).toEqual({ $and: [{ a: 1 }, { b: 2 }] });
    expect(tenant).toEqual({ tenantId: 't1' });
  });
});

describe('andWhere', () => {
  it('drops empty clauses and keeps order', () => {
    expect(andWhere()).toEqual({});
    expect(andWhere({}, undefined, { a: 1 })).toEqual({ a: 1 });
    expect(andWhere({ a: 1 }, {}, { b: 2 })).toEqual({ $and: [{ a: 1 }, { b: 2 }] });
  });
});
