import {
  heaviestDroppableField,
  humanBytes,
  sampleRecords,
  WEIGHT_SAMPLE_SIZE,
  weighFields,
} from './field-weights';

describe('field weights', () => {
  it('samples the first five plain-object rows', () => {
    const rows = [1, null, 'x', ...Array.from({ length: 8 }, (_, i) => ({ i }))];
    const sample = sampleRecords(rows);
    expect(WEIGHT_SAMPLE_SIZE).toBe(5);
    expect(sample).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }]);
  });

  it('sums compact JSON bytes per field, heaviest first, ties in first-seen order', () => {
    const weights = weighFields([
      { a: 'xx', b: 'yy', c: 'é' },
      { a: 'xx', c: 'é' },
    ]);
    expect(weights).toEqual([
      { field: 'a', bytes: 8 },
      { field: 'c', bytes: 8 },
      { field: 'b', bytes: 4 },
    ]);
  });

  it('weighs unserialisable values as nothing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(weighFields([{ loop: cyclic, big: BigInt(1), ok: 1 }])).toEqual([
      { field: 'ok', bytes: 1 },
      { field: 'loop', bytes: 0 },
      { field: 'big', bytes: 0 },
    ]);
  });

  it('never picks identity fields as the one to drop', () => {
    expect(
      heaviestDroppableField([
        { field: 'objectId', bytes: 90 },
        { field: 'updatedAt', bytes: 80 },
        { field: 'note', bytes: 2 },
      ]),
    ).toBe('note');
    expect(heaviestDroppableField([{ field: 'createdAt', bytes: 9 }])).toBeUndefined();
  });

  it('formats sizes in B, KB and MB', () => {
    expect(humanBytes(0)).toBe('0 B');
    expect(humanBytes(52.4)).toBe('52 B');
    expect(humanBytes(1023)).toBe('1023 B');
    expect(humanBytes(1024)).toBe('1.0 KB');
    expect(humanBytes(100002)).toBe('97.7 KB');
    expect(humanBytes(5 * 1024 * 1024 + 300000)).toBe('5.3 MB');
  });
});
