import { apiRow } from './pg-row-shape';

describe('apiRow: SQL rows in Parse REST shape', () => {
  const fields = {
    objectId: { type: 'String' },
    createdAt: { type: 'Date' },
    placedAt: { type: 'Date' },
    customer: { type: 'Pointer', targetClass: 'Customer' },
    where: { type: 'GeoPoint' },
    doc: { type: 'File' },
    meta: { type: 'Object' },
  };
  it('shapes pointers, dates, geo points and files; leaves NULL fields out', () => {
    const at = new Date('2024-03-01T10:00:00.000Z');
    expect(
      apiRow(
        {
          objectId: 'o1',
          createdAt: at,
          placedAt: at,
          customer: 'c1',
          where: { x: 2, y: 1 },
          doc: 'f.txt',
          meta: { a: 1 },
          status: null,
          __ord: 3,
        },
        fields,
      ),
    ).toEqual({
      objectId: 'o1',
      createdAt: '2024-03-01T10:00:00.000Z',
      placedAt: { __type: 'Date', iso: '2024-03-01T10:00:00.000Z' },
      customer: { __type: 'Pointer', className: 'Customer', objectId: 'c1' },
      where: { __type: 'GeoPoint', latitude: 1, longitude: 2 },
      doc: { __type: 'File', name: 'f.txt' },
      meta: { a: 1 },
    });
  });
  it('keeps null values when asked (a null group key is an answer)', () => {
    expect(apiRow({ _id: null, n: 2 }, {}, { keepNulls: true })).toEqual({ _id: null, n: 2 });
  });
});
