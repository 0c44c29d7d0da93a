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

  it('returns strings exactly as stored, "Class$id"-like text and hidden class names included', () => {
    const values = {
      total: 'Total$100',
      ref: 'Secret$k1',
      list: ['Secret$k2', '_Session$s1', 'Author$a1'],
      nested: { anything: '_Session$s2' },
      other: ['Secret', 'Secret$', '$5', 'costs Secret$5', '9Secret$k1', ''],
    };
    expect(redact(values, isDenied)).toEqual(values);
  });

  it('reads a _p_<field> storage column (Parse on MongoDB) as a pointer, by its name', () => {
    expect(
      redact({ _p_vault: 'Secret$k1', _p_owner: 'Author$a1', p_note: 'Secret$k2' }, isDenied),
    ).toEqual({
      _p_vault: { className: 'Secret', __redacted: true },
      _p_owner: 'Author$a1',
      p_note: 'Secret$k2',
    });
  });

  it('keeps plain objects with a className (no Parse type tag) as data', () => {
    const row = {
      meta: { className: 'Secret', note: 'plain JSON naming a class' },
      list: [{ className: '_Session', objectId: 'x' }],
    };
    expect(redact(row, isDenied)).toEqual(row);
  });

  it("reads a row's Pointer and Relation columns by the schema, whatever the value's shape", () => {
    const referenceFieldsOf = (c: string) =>
      c === 'Order' ? { vault: 'Secret', owner: 'Author' } : undefined;
    const out = redact(
      [
        {
          vault: 'Secret$k1',
          owner: 'Author$a1',
          note: 'Secret$k2',
          meta: { vault: 'Secret$k3' },
          missing: null,
        },
        { vault: 'k1', owner: 'a1' },
        { vault: { objectId: 'k1' }, owner: { objectId: 'a1' } },
        { vault: null },
      ],
      isDenied,
      { rootClass: 'Order', referenceFieldsOf },
    );
    expect(out).toEqual([
      {
        vault: { className: 'Secret', __redacted: true },
        owner: 'Author$a1',
        note: 'Secret$k2',
        meta: { vault: 'Secret$k3' },
        missing: null,
      },
      { vault: { className: 'Secret', __redacted: true }, owner: 'a1' },
      { vault: { className: 'Secret', __redacted: true }, owner: { objectId: 'a1' } },
      { vault: null },
    ]);
  });

  it("applies a joined row's own class schema to its columns", () => {
    const referenceFieldsOf = (c: string): Record<string, string> =>
      c === 'Author' ? { safe: 'Secret' } : {};
    const out = redact(
      { author: { __type: 'Object', className: 'Author', safe: 'k9', name: 'Secret$k9' } },
      isDenied,
      { rootClass: 'Order', referenceFieldsOf },
    );
    expect(out).toEqual({
      author: {
        __type: 'Object',
        className: 'Author',
        safe: { className: 'Secret', __redacted: true },
        name: 'Secret$k9',
      },
    });
  });

  it('walks an object with an unknown __type as data: internal keys go, references are checked', () => {
    const simplifyTyped = (v: Record<string, unknown>) => ({ simplified: v.__type });
    const out = redact(
      {
        data: {
          __type: 'Custom',
          sessionToken: 'r:secret',
          inner: { __type: 'Pointer', className: 'Secret', objectId: 'k1' },
          when: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' },
        },
      },
      isDenied,
      { simplifyTyped },
    );
    expect(out).toEqual({
      data: {
        __type: 'Custom',
        inner: { className: 'Secret', __redacted: true },
        when: { simplified: 'Date' },
      },
    });
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
    // A string is not a reference: no class is looked up for it.
    expect(predicate).not.toHaveBeenCalledWith('Team');
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
