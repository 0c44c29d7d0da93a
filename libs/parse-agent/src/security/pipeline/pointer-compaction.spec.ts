import { compactPointerKeys, compactPointers, parsePointer } from './pointer-compaction';

describe('parsePointer', () => {
  it('reads storage strings and Parse pointer objects', () => {
    expect(parsePointer('_User$abc')).toEqual({ className: '_User', objectId: 'abc' });
    expect(parsePointer({ __type: 'Pointer', className: 'Team', objectId: 'x1' })).toEqual({
      className: 'Team',
      objectId: 'x1',
    });
    expect(parsePointer('plain')).toBeUndefined();
    expect(parsePointer(42)).toBeUndefined();
  });
});

describe('compactPointerKeys', () => {
  it('strips the class prefix when every key points to the declared class', () => {
    expect(compactPointerKeys(['_User$a', '_User$b', null], '_User')).toEqual({
      keys: ['a', 'b', null],
      pointerClass: '_User',
    });
  });

  it('accepts bare objectIds (PostgreSQL stores only the id)', () => {
    expect(compactPointerKeys(['a', '_User$b'], '_User')).toEqual({
      keys: ['a', 'b'],
      pointerClass: '_User',
    });
  });

  it('leaves the keys raw when a key points to another class', () => {
    expect(compactPointerKeys(['_User$a', 'Team$b'], '_User')).toEqual({
      keys: ['_User$a', 'Team$b'],
    });
  });

  it('does nothing for a field that is not a pointer (a "$" in a value is not a pointer)', () => {
    expect(compactPointerKeys(['price$5'], undefined)).toEqual({ keys: ['price$5'] });
  });
});

describe('compactPointers (aggregate rows)', () => {
  it('rewrites _p_ columns to the bare field and reports the class once', () => {
    const r = compactPointers([
      { objectId: 'row1', _p_author: '_User$alice1' },
      { objectId: 'row2', _p_author: '_User$bob222' },
    ]);
    expect(r.rows).toEqual([
      { objectId: 'row1', author: 'alice1' },
      { objectId: 'row2', author: 'bob222' },
    ]);
    expect(r.pointerClasses).toEqual({ author: '_User' });
  });

  it('leaves a column raw when its class varies between rows', () => {
    const rows = [{ _p_owner: '_User$a' }, { _p_owner: 'Team$b' }];
    expect(compactPointers(rows)).toEqual({ rows, pointerClasses: {} });
  });

  it('leaves a column raw when a row has both _p_x and x', () => {
    const rows = [{ _p_author: '_User$a', author: 'shadow' }, { _p_author: '_User$b' }];
    expect(compactPointers(rows)).toEqual({ rows, pointerClasses: {} });
  });

  it('keeps nulls and compacts the rest', () => {
    const r = compactPointers([{ _p_author: null }, { _p_author: '_User$a' }]);
    expect(r.rows).toEqual([{ author: null }, { author: 'a' }]);
    expect(r.pointerClasses).toEqual({ author: '_User' });
  });
});
