import {
  includeTree,
  joinKey,
  keysBelow,
  keysForPath,
  pointersIn,
  slices,
  withJoined,
} from './include-joins';

const ptr = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });

describe('include-joins', () => {
  it('groups include paths by their first segment', () => {
    expect([...includeTree(['order.customer', 'order', 'product', 'order.customers'])]).toEqual([
      ['order', ['customer', 'customers']],
      ['product', []],
    ]);
  });

  it('keysBelow takes the keys under one head, or none', () => {
    expect(keysBelow(['a', 'customer.name', 'customer.tier', 'customers.x'], 'customer')).toEqual([
      'name',
      'tier',
    ]);
    expect(keysBelow(['a'], 'customer')).toBeUndefined();
    expect(keysBelow(undefined, 'customer')).toBeUndefined();
  });

  it('keysForPath never lets a dotted key reach a path except into a non-included Object field', () => {
    const objects = new Set(['address']);
    expect(
      keysForPath(
        ['number', 'customer.name', 'customers.name', 'address.city', 'order.customer.name'],
        objects,
        new Set(['order']),
      ),
    ).toEqual(['number', 'customer', 'customers', 'address.city', 'order']);
    // An Object field named by include is read whole, like any joined head.
    expect(keysForPath(['address.city'], objects, new Set(['address']))).toEqual(['address']);
    expect(keysForPath(undefined, objects, new Set())).toBeUndefined();
  });

  it('pointersIn reads one pointer or those in an array, nothing else', () => {
    expect(pointersIn(ptr('C', '1'))).toEqual([{ className: 'C', objectId: '1' }]);
    expect(pointersIn([ptr('C', '1'), 'C$2', { __type: 'Pointer', className: 'C' }, null])).toEqual(
      [{ className: 'C', objectId: '1' }],
    );
    expect(pointersIn('C$1')).toEqual([]);
    expect(pointersIn({ __type: 'Object', className: 'C', objectId: '1' })).toEqual([]);
  });

  it('withJoined swaps joined pointers, keeps the others bare, and changes nothing in place', () => {
    const joined = new Map([
      [joinKey('C', '1'), { __type: 'Object', className: 'C', objectId: '1' }],
    ]);
    const list = [ptr('C', '1'), ptr('C', '2')];
    const copy = structuredClone(list);
    expect(withJoined(list, joined)).toEqual([joined.get('C$1'), ptr('C', '2')]);
    expect(list).toEqual(copy);
    expect(withJoined(ptr('C', '2'), joined)).toEqual(ptr('C', '2'));
  });

  it('slices ids for reads of bounded size', () => {
    expect(slices([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(slices([], 2)).toEqual([]);
  });
});
