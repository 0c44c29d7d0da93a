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

describe('compactPointers: which columns are pointers', () => {
  const ptr = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });

  it('compacts a column of Parse Pointer objects of one class (direct PostgreSQL, Parse REST)', () => {
    const r = compactPointers([
      { objectId: 'r1', owner: ptr('Team', 't1'), _id: ptr('Team', 't1') },
      { objectId: 'r2', owner: null, _id: ptr('Team', 't2') },
    ]);
    expect(r.rows).toEqual([
      { objectId: 'r1', owner: 't1', _id: 't1' },
      { objectId: 'r2', owner: null, _id: 't2' },
    ]);
    expect(r.pointerClasses).toEqual({ owner: 'Team', _id: 'Team' });
  });

  it('compacts bare objectIds only where the lineage names a pointer column', () => {
    const rows = [
      { owner: 't1', copy: 't1' },
      { owner: 't2', copy: 't2' },
    ];
    const r = compactPointers(rows, (column) => (column === 'owner' ? 'Team' : undefined));
    expect(r.rows).toEqual(rows);
    expect(r.pointerClasses).toEqual({ owner: 'Team' });
  });

  it('never reads a string as a pointer by its look', () => {
    const rows = [
      { label: 'Total$100', ref: '_User$abc', owner: 'Team$t1' },
      { label: 'USD$5', ref: '_User$def', owner: 'Team$t2' },
    ];
    // Even a lineage column: "Class$id" text there is not the bare id the path would give.
    expect(compactPointers(rows, (c) => (c === 'owner' ? 'Team' : undefined))).toEqual({
      rows,
      pointerClasses: {},
    });
  });

  it('leaves a column raw when it mixes pointers with anything else', () => {
    const rows = [
      { owner: ptr('Team', 't1'), other: ptr('Team', 't1') },
      { owner: 'Team$t2', other: ptr('User', 'u1') },
    ];
    expect(compactPointers(rows)).toEqual({ rows, pointerClasses: {} });
  });
});
