import { redact } from './redactor';

const DENIED = new Set(['_Session', 'Secret']);
const isDenied = (className: string) => DENIED.has(className);

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

describe('redact', () => {
  it('replaces a pointer to a denied class with { className, __redacted: true } only', () => {
    const out = redact(
      { title: 'x', session: { __type: 'Pointer', className: '_Session', objectId: 's1' } },
      isDenied,
    ) as Record<string, unknown>;
    expect(out).toEqual({ title: 'x', session: { className: '_Session', __redacted: true } });
    expect(out.session).not.toHaveProperty('objectId');
  });

  it('replaces an included object of a denied class, dropping every field it had', () => {
    const out = redact(
      {
        secret: {
          __type: 'Object',
          className: 'Secret',
          objectId: 'k1',
          value: 'launch codes',
          owner: { __type: 'Pointer', className: 'Author', objectId: 'a1' },
        },
      },
      isDenied,
    );
    expect(out).toEqual({ secret: { className: 'Secret', __redacted: true } });
    expect(JSON.stringify(out)).not.toContain('launch codes');
  });

  it('redacts denied objects inside arrays and at depth', () => {
    const out = redact(
      [
        {
          tags: [{ __type: 'Pointer', className: 'Secret', objectId: 'k1' }],
          meta: { deep: { deeper: { __type: 'Relation', className: 'Secret' } } },
        },
      ],
      isDenied,
    );
    expect(out).toEqual([
      {
        tags: [{ className: 'Secret', __redacted: true }],
        meta: { deep: { deeper: { className: 'Secret', __redacted: true } } },
      },
    ]);
  });

  it('replaces "Class$id" strings of denied classes under any key', () => {
    const out = redact(
      {
        _p_session: '_Session$s1',
        ref: 'Secret$k1',
        list: ['Secret$k2', 'Author$a1'],
        nested: { anything: '_Session$s2' },
      },
      isDenied,
    );
    expect(out).toEqual({
      _p_session: { className: '_Session', __redacted: true },
      ref: { className: 'Secret', __redacted: true },
      list: [{ className: 'Secret', __redacted: true }, 'Author$a1'],
      nested: { anything: { className: '_Session', __redacted: true } },
    });
  });

  it('leaves strings that are not "Class$id" alone', () => {
    const values = ['Secret', 'Secret$', '$5', 'costs Secret$5', '9Secret$k1', ''];
    expect(redact(values, isDenied)).toEqual(values);
  });

  it('drops ACL and internal fields at every depth', () => {
    const out = redact(
      {
        objectId: 'o1',
        ACL: { '*': { read: true } },
        _rperm: ['*'],
        _wperm: [],
        _hashed_password: 'bcrypt',
        sessionToken: 'r:abc',
        authData: { facebook: { id: '1' } },
        _auth_data_github: { id: '2' },
        author: {
          __type: 'Object',
          className: 'Author',
          objectId: 'a1',
          name: 'Ada',
          ACL: {},
          _session_token: 'r:def',
          friends: [{ _email_verify_token: 't', name: 'Bob' }],
        },
      },
      isDenied,
    );
    expect(out).toEqual({
      objectId: 'o1',
      author: {
        __type: 'Object',
        className: 'Author',
        objectId: 'a1',
        name: 'Ada',
        friends: [{ name: 'Bob' }],
      },
    });
  });

  it('leaves objects of allowed classes and plain data as they were', () => {
    const row = {
      objectId: 'o1',
      author: { __type: 'Pointer', className: 'Author', objectId: 'a1' },
      ref: 'Author$a1',
      publishedAt: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' },
      counts: [1, 2, 3],
      flags: { featured: true, note: null },
    };
    expect(redact(row, isDenied)).toEqual(row);
  });

  it('keeps Date instances (driver rows) intact', () => {
    const createdAt = new Date('2024-01-01T00:00:00.000Z');
    const out = redact({ createdAt }, isDenied) as Record<string, unknown>;
    expect(out.createdAt).toBeInstanceOf(Date);
    expect((out.createdAt as Date).toISOString()).toBe('2024-01-01T00:00:00.000Z');
  });

  it('passes primitives through', () => {
    expect(redact(3, isDenied)).toBe(3);
    expect(redact(null, isDenied)).toBeNull();
    expect(redact(undefined, isDenied)).toBeUndefined();
    expect(redact(true, isDenied)).toBe(true);
  });

  it('never mutates its input and returns new containers', () => {
    const input = deepFreeze({
      ACL: { '*': { read: true } },
      session: { __type: 'Pointer', className: '_Session', objectId: 's1' },
      rows: [{ _rperm: ['*'], name: 'a' }],
    });
    const before = JSON.stringify(input);
    const out = redact(input, isDenied) as Record<string, unknown>;
    expect(JSON.stringify(input)).toBe(before);
    expect(out).not.toBe(input);
    expect(out.rows).not.toBe(input.rows);
  });

  it('asks the predicate about the class names it meets', () => {
    const predicate = jest.fn(() => false);
    redact(
      { a: { __type: 'Pointer', className: 'Author', objectId: 'x' }, b: 'Team$t1' },
      predicate,
    );
    expect(predicate).toHaveBeenCalledWith('Author');
    expect(predicate).toHaveBeenCalledWith('Team');
  });
});

describe('redact with allowlists', () => {
  const allow: Record<string, ReadonlySet<string>> = {
    Order: new Set(['objectId', 'total', 'customer', 'meta']),
    Customer: new Set(['objectId', 'name']),
  };
  const allowlistFor = (c: string) => allow[c];
  const never = () => false;

  it('cuts top-level rows of the root class and joined rows to their allowlists, not plain JSON', () => {
    const rows = [
      {
        objectId: 'o1',
        total: 5,
        secretNote: 'x',
        meta: { anything: 1, phone: 'kept: plain JSON is data' },
        customer: {
          __type: 'Object',
          className: 'Customer',
          objectId: 'c1',
          name: 'Ann',
          phone: '555',
        },
      },
    ];
    expect(redact(rows, never, { allowlistFor, rootClass: 'Order' })).toEqual([
      {
        objectId: 'o1',
        total: 5,
        meta: { anything: 1, phone: 'kept: plain JSON is data' },
        customer: { __type: 'Object', className: 'Customer', objectId: 'c1', name: 'Ann' },
      },
    ]);
  });

  it('still redacts denied classes and internal fields while applying allowlists', () => {
    const out = redact(
      {
        objectId: 'o1',
        customer: { __type: 'Pointer', className: 'Secret', objectId: 's' },
        _rperm: ['*'],
      },
      (c) => c === 'Secret',
      { allowlistFor, rootClass: 'Order' },
    );
    expect(out).toEqual({ objectId: 'o1', customer: { className: 'Secret', __redacted: true } });
  });
});
