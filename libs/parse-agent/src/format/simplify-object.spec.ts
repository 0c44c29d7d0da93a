import { simplifyObject, simplifyRow } from './simplify-object';

describe('simplifyObject', () => {
  it('turns a Date wrapper into its ISO string', () => {
    expect(simplifyObject({ __type: 'Date', iso: '2024-05-01T10:00:00.000Z' })).toBe(
      '2024-05-01T10:00:00.000Z',
    );
  });

  it('turns a driver Date instance into an ISO string', () => {
    expect(simplifyObject(new Date('2024-05-01T10:00:00.000Z'))).toBe('2024-05-01T10:00:00.000Z');
    expect(simplifyObject(new Date('not a date'))).toBeNull();
  });

  it('writes pointers as "Class$objectId", the string a where accepts', () => {
    const out = simplifyObject({ __type: 'Pointer', className: 'Author', objectId: 'a1' });
    expect(out).toBe('Author$a1');
    // Without both parts there is no string to write: the wire shape stays.
    expect(simplifyObject({ __type: 'Pointer', className: 'Author' })).toEqual({
      __type: 'Pointer',
      className: 'Author',
      objectId: null,
    });
  });

  it('converts File, GeoPoint, Polygon and Relation wrappers', () => {
    expect(
      simplifyObject({ __type: 'File', name: 'a.png', url: 'https://files/a.png', extra: 1 }),
    ).toEqual({ __type: 'File', name: 'a.png', url: 'https://files/a.png' });
    expect(simplifyObject({ __type: 'GeoPoint', latitude: 48.85, longitude: 2.35 })).toEqual({
      __type: 'GeoPoint',
      latitude: 48.85,
      longitude: 2.35,
    });
    expect(
      simplifyObject({
        __type: 'Polygon',
        coordinates: [
          [0, 0],
          [0, 1],
          [1, 1],
        ],
      }),
    ).toEqual({
      __type: 'Polygon',
      coordinates: [
        [0, 0],
        [0, 1],
        [1, 1],
      ],
    });
    expect(simplifyObject({ __type: 'Relation', className: 'Tag' })).toEqual({
      __type: 'Relation',
      className: 'Tag',
    });
  });

  it('shortens long Bytes to 50 characters plus an ellipsis and leaves short ones whole', () => {
    const long = 'A'.repeat(60) + 'TAIL';
    const out = simplifyObject({ __type: 'Bytes', base64: long }) as { base64: string };
    expect(out).toEqual({ __type: 'Bytes', base64: `${'A'.repeat(50)}...` });
    expect(out.base64).not.toContain('TAIL');
    expect(simplifyObject({ __type: 'Bytes', base64: 'aGk=' })).toEqual({
      __type: 'Bytes',
      base64: 'aGk=',
    });
  });

  it('drops ACL at every level, including inside included objects and arrays', () => {
    const row = {
      objectId: 'p1',
      title: 'Hello',
      ACL: { '*': { read: true }, 'role:Admin': { write: true } },
      author: {
        __type: 'Object',
        className: 'Author',
        objectId: 'a1',
        name: 'Ada',
        ACL: { u9: { read: true } },
        createdAt: '2024-01-01T00:00:00.000Z',
        avatar: { __type: 'File', name: 'ada.png', url: 'https://f/ada.png' },
        editor: 'Author$a2',
      },
      history: [{ note: 'x', ACL: { u1: { read: true } } }],
      settings: { nested: { ACL: { u2: { read: true } }, keep: true } },
    };
    const out = simplifyObject(row);
    expect(out).toEqual({
      objectId: 'p1',
      title: 'Hello',
      author: {
        className: 'Author',
        objectId: 'a1',
        name: 'Ada',
        createdAt: '2024-01-01T00:00:00.000Z',
        avatar: { __type: 'File', name: 'ada.png', url: 'https://f/ada.png' },
        editor: 'Author$a2',
      },
      history: [{ note: 'x' }],
      settings: { nested: { keep: true } },
    });
    const text = JSON.stringify(out);
    expect(text).not.toContain('ACL');
    expect(text).not.toContain('role:Admin');
    expect(text).not.toContain('u9');
    expect(text).not.toContain('"__type":"Object"');
  });

  it('maps arrays of typed values', () => {
    expect(
      simplifyObject([
        { __type: 'Pointer', className: 'Tag', objectId: 't1' },
        { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' },
        3,
        null,
      ]),
    ).toEqual(['Tag$t1', '2024-01-01T00:00:00.000Z', 3, null]);
  });

  it('keeps redaction markers and unknown __type objects as plain data', () => {
    expect(simplifyObject({ className: 'Secret', __redacted: true })).toEqual({
      className: 'Secret',
      __redacted: true,
    });
    expect(simplifyObject({ __type: 'Future', value: 1, ACL: {} })).toEqual({
      __type: 'Future',
      value: 1,
    });
  });

  it('passes scalars through', () => {
    expect(simplifyObject('text')).toBe('text');
    expect(simplifyObject(42)).toBe(42);
    expect(simplifyObject(false)).toBe(false);
    expect(simplifyObject(null)).toBeNull();
    expect(simplifyObject(undefined)).toBeUndefined();
  });

  it('never mutates its input', () => {
    const input = {
      ACL: { '*': { read: true } },
      when: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' },
      inc: { __type: 'Object', className: 'A', objectId: 'a', ACL: {} },
      list: [{ ACL: {}, x: 1 }],
    };
    const before = structuredClone(input);
    const out = simplifyObject(input) as Record<string, unknown>;
    expect(input).toEqual(before);
    expect(out).not.toBe(input);
    expect((out.list as unknown[])[0]).not.toBe(input.list[0]);
  });

  it('simplifyRow returns a simplified record', () => {
    expect(simplifyRow({ objectId: 'x', ACL: {}, at: { __type: 'Date', iso: 'i' } })).toEqual({
      objectId: 'x',
      at: 'i',
    });
  });
});
