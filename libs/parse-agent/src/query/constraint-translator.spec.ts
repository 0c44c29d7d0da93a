import { MAX_QUERY_DEPTH, MAX_REGEX_LENGTH } from '../core/constants';
import {
  AccessDeniedError,
  AgentValidationError,
  InvalidQueryError,
  PointerShapeError,
  SecurityBlockedError,
} from '../core/errors';
import {
  ALLOWED_OPERATORS,
  CODE_EXECUTION_OPERATORS,
  collectWhereFields,
  checkPointerWrite,
  normalizeWhere,
  validateWhere,
  type FieldType,
  type Where,
} from './constraint-translator';

/** Runs fn and returns what it threw; fails the test when it does not throw. */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** `{ a: 1 }` wrapped in `levels` nested `$and` arrays. */
function nestAnd(levels: number): Where {
  let where: Where = { a: 1 };
  for (let i = 0; i < levels; i++) where = { $and: [where] };
  return where;
}

const pointer = (className: string, objectId: string) => ({
  __type: 'Pointer',
  className,
  objectId,
});

describe('validateWhere', () => {
  describe('shape', () => {
    it('treats a missing where as no constraint', () => {
      expect(validateWhere(undefined)).toEqual({});
      expect(validateWhere(null)).toEqual({});
    });

    it('returns the very object it accepted', () => {
      const where = { status: 'open', total: { $gt: 10 } };
      expect(validateWhere(where)).toBe(where);
    });

    it.each([[[]], ['status = open'], [42], [true]])(
      'refuses a where that is not an object (%p) as invalid_query',
      (where) => {
        const error = thrownBy(() => validateWhere(where));
        expect(error).toBeInstanceOf(InvalidQueryError);
        expect((error as InvalidQueryError).errorCode).toBe('invalid_query');
      },
    );
  });

  describe('operators', () => {
    it('accepts comparison, list and existence operators on a field', () => {
      const where = {
        total: { $lt: 10, $lte: 10, $gt: 1, $gte: 1, $ne: 5, $eq: 6 },
        tags: { $in: ['a'], $nin: ['b'], $all: ['c'], $containedIn: ['d'], $containsAll: ['e'] },
        note: { $exists: true },
        name: { $regex: '^Ada', $options: 'i' },
      };
      expect(() => validateWhere(where)).not.toThrow();
    });

    it('accepts geo and full-text operators with their option objects', () => {
      const where = {
        location: {
          $nearSphere: { __type: 'GeoPoint', latitude: 48.85, longitude: 2.35 },
          $maxDistanceInKilometers: 5,
        },
        area: { $geoWithin: { $centerSphere: [[2.35, 48.85], 0.01] } },
        zone: { $geoWithin: { $box: [{ __type: 'GeoPoint', latitude: 0, longitude: 0 }] } },
        title: { $text: { $search: { $term: 'parse' } } },
      };
      expect(() => validateWhere(where)).not.toThrow();
    });

    it('accepts typed equality values and equality on embedded objects', () => {
      const where = {
        author: pointer('Author', 'a1'),
        publishedAt: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' },
        address: { city: 'Paris', zip: '75001' },
      };
      expect(() => validateWhere(where)).not.toThrow();
    });

    it('accepts $and/$or/$nor of constraint objects', () => {
      const where = {
        $or: [{ status: 'open' }, { $and: [{ total: { $gt: 5 } }, { total: { $lt: 9 } }] }],
        $nor: [{ archived: true }],
      };
      expect(() => validateWhere(where)).not.toThrow();
    });

    it.each(['$elemMatch', '$not', '$type', '$mod', '$size', '$jsonSchema'])(
      'refuses the unknown field operator %s as invalid_query, listing what is allowed',
      (op) => {
        const error = thrownBy(() => validateWhere({ field: { [op]: 1 } }));
        expect(error).toBeInstanceOf(InvalidQueryError);
        expect(error).not.toBeInstanceOf(SecurityBlockedError);
        const message = (error as Error).message;
        expect(message).toContain(`Unknown operator '${op}'`);
        expect(message).toContain('Allowed operators:');
        expect(message).toContain('$in');
      },
    );

    it.each(['$comment', '$text', '$unknown'])(
      'refuses the unknown top-level operator %s',
      (op) => {
        expect(() => validateWhere({ [op]: 'x' })).toThrow(InvalidQueryError);
      },
    );

    it('refuses logical operators used as field operators', () => {
      expect(() => validateWhere({ status: { $or: [{ $eq: 'a' }] } })).toThrow(InvalidQueryError);
      expect(() => validateWhere({ status: { $and: [] } })).toThrow(InvalidQueryError);
    });

    it('refuses $and/$or/$nor whose value is not an array of objects', () => {
      expect(() => validateWhere({ $or: { status: 'open' } })).toThrow(InvalidQueryError);
      expect(() => validateWhere({ $and: ['status'] })).toThrow(InvalidQueryError);
      expect(() => validateWhere({ $nor: [[{ a: 1 }]] })).toThrow(InvalidQueryError);
    });

    it('finds unknown operators nested inside an operator operand', () => {
      expect(() => validateWhere({ a: { $eq: { $type: 'string' } } })).toThrow(InvalidQueryError);
    });

    it('exposes the allowlist the spec names, with no code-executing operator in it', () => {
      const spec =
        '$lt $lte $gt $gte $ne $eq $in $nin $all $exists $regex $options $text $search $near ' +
        '$nearSphere $geoWithin $geoIntersects $centerSphere $box $polygon $geometry $maxDistance ' +
        '$maxDistanceInMiles $maxDistanceInKilometers $maxDistanceInRadians $relatedTo $inQuery ' +
        '$notInQuery $containedIn $containsAll $select $dontSelect $or $and $nor ' +
        // Parse's own geo box (the SDK's withinGeoBox), which Parse REST runs.
        '$within';
      expect([...ALLOWED_OPERATORS].sort()).toEqual(spec.split(' ').sort());
      expect(ALLOWED_OPERATORS.has('$not')).toBe(false);
      for (const op of CODE_EXECUTION_OPERATORS) expect(ALLOWED_OPERATORS.has(op)).toBe(false);
    });
  });

  describe('code-executing operators', () => {
    const ops = ['$where', '$function', '$accumulator', '$expr'];

    it('covers exactly $where, $function, $accumulator and $expr', () => {
      expect([...CODE_EXECUTION_OPERATORS].sort()).toEqual([...ops].sort());
    });

    const placements: Array<[string, (op: string) => Where]> = [
      ['at the top level', (op) => ({ [op]: 'sleep(5000)' })],
      ['as a field operator', (op) => ({ name: { [op]: 'sleep(5000)' } })],
      ['inside $or', (op) => ({ $or: [{ a: 1 }, { [op]: 'sleep(5000)' }] })],
      ['inside nested $and/$nor', (op) => ({ $and: [{ $nor: [{ [op]: 'x' }] }] })],
      [
        'inside an $inQuery where',
        (op) => ({ author: { $inQuery: { className: 'Author', where: { [op]: 'x' } } } }),
      ],
      ['inside an operator operand', (op) => ({ a: { $ne: { [op]: 'x' } } })],
      [
        'beside a __type key',
        (op) => ({ author: { __type: 'Pointer', className: 'A', objectId: 'x', [op]: 'x' } }),
      ],
      [
        'inside a typed operand',
        (op) => ({ at: { $ne: { __type: 'Date', iso: '2024-01-01T00:00:00Z', [op]: 'x' } } }),
      ],
    ];

    for (const op of ops) {
      it.each(placements)(`refuses ${op} %s as invalid_query`, (_where, build) => {
        const error = thrownBy(() => validateWhere(build(op)));
        expect(error).toBeInstanceOf(InvalidQueryError);
        expect((error as InvalidQueryError).errorCode).toBe('invalid_query');
        expect((error as Error).message).toContain(`'${op}'`);
        expect((error as Error).message).toContain('execute code');
      });
    }

    it('refuses $function hidden inside $expr', () => {
      const where = { $expr: { $function: { body: 'function() { return true }', args: [] } } };
      expect(() => validateWhere(where)).toThrow(InvalidQueryError);
    });
  });

  describe('internal fields', () => {
    const internal = [
      '_hashed_password',
      '_password_history',
      '_session_token',
      '_sessionToken',
      'sessionToken',
      'session_token',
      '_email_verify_token',
      '_perishable_token',
      '_failed_login_count',
      '_account_lockout_expires_at',
      '_rperm',
      '_wperm',
      '_tombstone',
      '_auth_data',
      '_auth_data_facebook',
      'authData',
    ];

    function expectBlocked(where: Where) {
      const error = thrownBy(() => validateWhere(where));
      expect(error).toBeInstanceOf(SecurityBlockedError);
      expect((error as SecurityBlockedError).errorCode).toBe('security_blocked');
      expect((error as SecurityBlockedError).reason).toBe('denied_internal_field');
      return error as SecurityBlockedError;
    }

    it.each(internal)('refuses a constraint on %s', (field) => {
      const error = expectBlocked({ [field]: { $exists: true } });
      expect(error.message).toContain(`'${field}'`);
      expect(error.message).toContain('internal');
    });

    it('refuses dotted paths into internal fields', () => {
      expectBlocked({ 'authData.facebook.id': '123' });
      expectBlocked({ '_auth_data_github.id': '123' });
    });

    it('refuses internal fields inside $or, $and and $nor at any depth', () => {
      expectBlocked({ $or: [{ status: 'open' }, { _hashed_password: { $exists: true } }] });
      expectBlocked({ $and: [{ $or: [{ a: 1 }, { $nor: [{ _rperm: { $in: ['*'] } }] }] }] });
    });

    it('refuses internal fields inside cross-class subquery wheres, however deep', () => {
      expectBlocked({
        author: { $inQuery: { className: '_User', where: { _session_token: 'r:abc' } } },
      });
      expectBlocked({
        author: { $notInQuery: { className: '_User', where: { $or: [{ sessionToken: 'x' }] } } },
      });
      expectBlocked({
        author: {
          $inQuery: {
            className: 'Author',
            where: {
              owner: { $inQuery: { className: '_User', where: { _perishable_token: 'x' } } },
            },
          },
        },
      });
      expectBlocked({
        owner: {
          $select: { query: { className: '_User', where: { _auth_data: 'x' } }, key: 'objectId' },
        },
      });
      expectBlocked({
        owner: {
          $dontSelect: { query: { className: '_User', where: { authData: 'x' } }, key: 'objectId' },
        },
      });
    });

    it('refuses $select/$dontSelect keys that name an internal field', () => {
      expectBlocked({
        token: { $select: { query: { className: '_Session' }, key: 'sessionToken' } },
      });
      expectBlocked({
        token: { $dontSelect: { query: { className: '_User' }, key: '_hashed_password' } },
      });
    });

    it('does not refuse ordinary fields that merely resemble internal ones', () => {
      expect(() =>
        validateWhere({
          passwordHint: 'x',
          hashed_password: 'x',
          sessionTokenCount: { $gt: 1 },
          email: 'a@b.c',
          note: '_hashed_password',
        }),
      ).not.toThrow();
    });
  });

  describe('nesting depth', () => {
    it('accepts moderately nested wheres', () => {
      expect(() => validateWhere(nestAnd(MAX_QUERY_DEPTH - 2))).not.toThrow();
    });

    it('refuses wheres nested past the limit as invalid_query', () => {
      for (const levels of [MAX_QUERY_DEPTH, MAX_QUERY_DEPTH + 1, 50]) {
        const error = thrownBy(() => validateWhere(nestAnd(levels)));
        expect(error).toBeInstanceOf(InvalidQueryError);
        expect((error as Error).message).toContain('nested too deeply');
      }
    });

    it('counts cross-class subqueries towards the depth', () => {
      let where: Where = { a: 1 };
      for (let i = 0; i < MAX_QUERY_DEPTH; i++) {
        where = { ref: { $inQuery: { className: 'Node', where } } };
      }
      expect(() => validateWhere(where)).toThrow(InvalidQueryError);
    });
  });

  describe('regular expressions', () => {
    const blocked = (where: Where, reason: string) => {
      const error = thrownBy(() => validateWhere(where));
      expect(error).toBeInstanceOf(SecurityBlockedError);
      expect((error as SecurityBlockedError).reason).toBe(reason);
    };

    it(`accepts a pattern of exactly ${MAX_REGEX_LENGTH} characters and refuses a longer one`, () => {
      expect(() => validateWhere({ name: { $regex: 'a'.repeat(MAX_REGEX_LENGTH) } })).not.toThrow();
      blocked({ name: { $regex: 'a'.repeat(MAX_REGEX_LENGTH + 1) } }, 'regex_too_long');
    });

    it('refuses a non-string pattern as invalid_query', () => {
      expect(() => validateWhere({ name: { $regex: 42 } })).toThrow(InvalidQueryError);
      expect(() => validateWhere({ name: { $regex: { $where: 'x' } } })).toThrow(InvalidQueryError);
    });

    it.each(['(a+)+', '(a*)*', '^(\\w+)*$', '(.*a)+$', '(x+x+)+y', '(ab*)?'])(
      'refuses the nested quantifier %s',
      (pattern) => blocked({ name: { $regex: pattern } }, 'regex_redos'),
    );

    it.each(['^Ada', 'a+b*', '(ab)+', '[a-z]+@example\\.com$', '(foo|bar)*'])(
      'accepts the plain pattern %s',
      (pattern) => expect(() => validateWhere({ name: { $regex: pattern } })).not.toThrow(),
    );

    it.each(['', 'i', 'm', 'x', 'im', 'imx'])('accepts $options %p', (options) => {
      expect(() => validateWhere({ name: { $regex: 'a', $options: options } })).not.toThrow();
    });

    it.each([['s'], ['is'], ['g'], ['u'], ['iiiiiiiii'], [5], [null]])(
      'refuses $options %p',
      (options) => blocked({ name: { $regex: 'a', $options: options } }, 'regex_options'),
    );

    it('checks patterns inside $or and inside subqueries too', () => {
      blocked({ $or: [{ name: { $regex: '(a+)+' } }] }, 'regex_redos');
      blocked(
        { author: { $inQuery: { className: 'Author', where: { name: { $regex: '(a+)+' } } } } },
        'regex_redos',
      );
    });

    it('checks a pattern smuggled beside a __type key', () => {
      blocked({ name: { __type: 'Pointer', $regex: '(a+)+' } }, 'regex_redos');
    });
  });

  describe('cross-class operators', () => {
    it('passes every class a cross-class operator reaches through checkClass', () => {
      const checkClass = jest.fn();
      validateWhere(
        {
          author: { $inQuery: { className: 'Author', where: { name: 'Ada' } } },
          editor: { $notInQuery: { className: 'Editor', where: {} } },
          owner: { $select: { query: { className: 'Team', where: {} }, key: 'ownerId' } },
          reviewer: { $dontSelect: { query: { className: 'Reviewer' }, key: 'id' } },
          $relatedTo: { object: pointer('Library', 'l1'), key: 'books' },
        },
        { checkClass, limits: { maxSubqueries: 5 } },
      );
      expect(checkClass.mock.calls.map(([c]) => c as string).sort()).toEqual([
        'Author',
        'Editor',
        'Library',
        'Reviewer',
        'Team',
      ]);
    });

    it('checks classes reached by nested subqueries and inside $or', () => {
      const checkClass = jest.fn();
      validateWhere(
        {
          $or: [
            {
              author: {
                $inQuery: {
                  className: 'Author',
                  where: { publisher: { $inQuery: { className: 'Publisher' } } },
                },
              },
            },
            { $relatedTo: { object: pointer('Shelf', 's1'), key: 'books' } },
          ],
        },
        { checkClass },
      );
      expect(checkClass.mock.calls.map(([c]) => c as string)).toEqual([
        'Author',
        'Publisher',
        'Shelf',
      ]);
    });

    it('lets a refusal from checkClass through unchanged', () => {
      const denial = new AccessDeniedError("Class '_Session' is not accessible to this agent", {
        kind: 'hidden_class',
      });
      const checkClass = (className: string) => {
        if (className === '_Session') throw denial;
      };
      expect(
        thrownBy(() =>
          validateWhere(
            { token: { $inQuery: { className: '_Session', where: {} } } },
            { checkClass },
          ),
        ),
      ).toBe(denial);
      expect(
        thrownBy(() =>
          validateWhere(
            { $relatedTo: { object: pointer('_Session', 'x'), key: 'k' } },
            { checkClass },
          ),
        ),
      ).toBe(denial);
    });

    it('refuses the class before walking its where', () => {
      const checkClass = jest.fn(() => {
        throw new AccessDeniedError('no');
      });
      const error = thrownBy(() =>
        validateWhere(
          { a: { $inQuery: { className: 'Hidden', where: { $where: 'x' } } } },
          { checkClass },
        ),
      );
      expect(error).toBeInstanceOf(AccessDeniedError);
    });

    it.each<[string, Where]>([
      ['$inQuery without className', { a: { $inQuery: { where: {} } } }],
      ['$inQuery that is not an object', { a: { $inQuery: 'Author' } }],
      ['$notInQuery without className', { a: { $notInQuery: {} } }],
      ['$select without key', { a: { $select: { query: { className: 'A' } } } }],
      ['$select without query', { a: { $select: { key: 'k' } } }],
      [
        '$dontSelect with a query lacking className',
        { a: { $dontSelect: { query: {}, key: 'k' } } },
      ],
      ['$relatedTo without object', { $relatedTo: { key: 'books' } }],
      ['$relatedTo without key', { $relatedTo: { object: pointer('A', 'x') } }],
      ['$relatedTo object without className', { $relatedTo: { object: {}, key: 'k' } }],
      ['$relatedTo as a field operator', { a: { $relatedTo: { object: pointer('A', 'x') } } }],
    ])('refuses %s as invalid_query without consulting checkClass', (_label, where) => {
      const checkClass = jest.fn();
      expect(() => validateWhere(where, { checkClass })).toThrow(InvalidQueryError);
      expect(checkClass).not.toHaveBeenCalled();
    });

    it('refuses a subquery whose where is not an object', () => {
      expect(() => validateWhere({ a: { $inQuery: { className: 'A', where: 'x' } } })).toThrow(
        InvalidQueryError,
      );
    });

    it('works without a class gate', () => {
      expect(() =>
        validateWhere({ a: { $inQuery: { className: 'Author', where: { b: 1 } } } }),
      ).not.toThrow();
    });
  });
});

describe('validateWhere cost caps', () => {
  const tooCostly = (where: unknown, pattern: RegExp) => {
    const error = thrownBy(() => validateWhere(where));
    expect(error).toBeInstanceOf(InvalidQueryError);
    expect((error as Error).message).toMatch(/too costly/);
    expect((error as Error).message).toMatch(pattern);
  };
  const select = (i: number) => ({
    [`f${i}`]: { $select: { query: { className: 'Customer', where: { city: 'x' } }, key: 'k' } },
  });

  it('refuses the 60-$select query before any class gate runs', () => {
    const checkClass = jest.fn();
    const where = { $or: Array.from({ length: 60 }, (_, i) => select(i)) };
    const error = thrownBy(() => validateWhere(where, { checkClass }));
    expect(error).toBeInstanceOf(InvalidQueryError);
    expect((error as Error).message).toMatch(/more than 32 \$or\/\$and\/\$nor clauses/);
    expect(checkClass).not.toHaveBeenCalled();
  });

  it('counts subqueries at any depth, nested ones included', () => {
    tooCostly(Object.assign({}, ...Array.from({ length: 5 }, (_, i) => select(i))), /4 subqueries/);
    const nested = {
      a: {
        $inQuery: {
          className: 'A',
          where: {
            b: {
              $inQuery: {
                className: 'B',
                where: Object.assign({}, select(1), select(2), select(3)),
              },
            },
          },
        },
      },
    };
    tooCostly(nested, /subqueries/);
    expect(
      validateWhere(Object.assign({}, ...Array.from({ length: 4 }, (_, i) => select(i)))),
    ).toBeTruthy();
  });

  it('caps $in lists, regex count and the where size, naming the fix', () => {
    tooCostly(
      { sku: { $in: Array.from({ length: 501 }, (_, i) => i) } },
      /\$in list on 'sku'.*Split/,
    );
    tooCostly(
      Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, { $regex: '^a' }])),
      /8 \$regex/,
    );
    tooCostly({ note: 'x'.repeat(17_000) }, /bytes of JSON/);
  });

  it('takes tighter or looser limits from the caller', () => {
    expect(() =>
      validateWhere({ a: { $in: [1, 2, 3] } }, { limits: { maxListLength: 2 } }),
    ).toThrow(/more than 2 entries/);
    expect(
      validateWhere(
        { a: { $in: Array.from({ length: 600 }, (_, i) => i) } },
        { limits: { maxListLength: 1000 } },
      ),
    ).toBeTruthy();
  });

  it('refuses extra keys in a subquery operand', () => {
    expect(() =>
      validateWhere({ a: { $inQuery: { className: 'A', where: {}, limit: 5 } } }),
    ).toThrow(/\{ className, where \} and nothing else/);
    expect(() =>
      validateWhere({ a: { $select: { query: { className: 'A' }, key: 'b', extra: 1 } } }),
    ).toThrow(/\$select takes/);
  });
});

describe('collectWhereFields', () => {
  it('lists root field names through $and/$or/$nor, once each', () => {
    const fields = collectWhereFields({
      status: 'open',
      'address.city': 'Paris',
      $or: [{ total: { $gt: 1 } }, { $and: [{ owner: 'u1' }, { status: 'closed' }] }],
      $nor: [{ archived: true }],
    });
    expect(fields.sort()).toEqual(['address', 'archived', 'owner', 'status', 'total']);
  });

  it('does not list operators, subquery fields of other classes or $relatedTo', () => {
    const fields = collectWhereFields({
      author: { $inQuery: { className: 'Author', where: { secretNote: 'x' } } },
      $relatedTo: { object: pointer('Library', 'l1'), key: 'books' },
    });
    expect(fields).toEqual(['author']);
  });

  it('returns nothing for an empty where', () => {
    expect(collectWhereFields({})).toEqual([]);
  });
});

describe('normalizeWhere', () => {
  const fields: Record<string, FieldType> = {
    author: { type: 'Pointer', targetClass: 'Author' },
    owner: { type: 'Pointer', targetClass: '_User' },
    publishedAt: { type: 'Date' },
    title: { type: 'String' },
  };

  describe('pointer fields', () => {
    it('turns a bare objectId into a Pointer to the column target', () => {
      expect(normalizeWhere({ author: 'a1' }, fields)).toEqual({
        author: pointer('Author', 'a1'),
      });
    });

    it('accepts "Class$id" naming the target class', () => {
      expect(normalizeWhere({ author: 'Author$a1', owner: '_User$u1' }, fields)).toEqual({
        author: pointer('Author', 'a1'),
        owner: pointer('_User', 'u1'),
      });
    });

    it('refuses a pointer to another class or a malformed one as pointer_shape_mismatch', () => {
      const error = thrownBy(() => normalizeWhere({ author: '_User$u1' }, fields));
      expect(error).toBeInstanceOf(PointerShapeError);
      expect((error as PointerShapeError).errorCode).toBe('pointer_shape_mismatch');
      expect((error as PointerShapeError).details).toEqual({
        field: 'author',
        expected_class: 'Author',
      });
      expect((error as Error).message).toContain('_User');
      const wrong: unknown[] = [
        { $in: ['a1', 'Publisher$p1'] },
        pointer('Publisher', 'p1'),
        { $ne: pointer('Publisher', 'p1') },
        { __type: 'Pointer', className: 'Author' },
        { __type: 'Pointer', className: 'Author', objectId: '' },
        { objectId: 'a1' },
        { className: 'Author', objectId: 'a1' },
        'Author$',
        '$a1',
        42,
        { $in: [['a1']] },
      ];
      for (const value of wrong) {
        const refusal = thrownBy(() => normalizeWhere({ author: value } as Where, fields));
        expect(refusal).toBeInstanceOf(PointerShapeError);
        expect((refusal as PointerShapeError).details).toEqual({
          field: 'author',
          expected_class: 'Author',
        });
      }
      // Nested in $or / $and too.
      expect(() =>
        normalizeWhere({ $or: [{ title: 'x' }, { owner: pointer('Author', 'a1') }] }, fields),
      ).toThrow(PointerShapeError);
      // A target the agent may not see is never named.
      const hiddenTarget = thrownBy(() =>
        normalizeWhere({ author: 42 } as Where, fields, (c) => c === 'Author'),
      );
      expect((hiddenTarget as PointerShapeError).details).toEqual({
        field: 'author',
        expected_class: '<targetClass>',
      });
      expect((hiddenTarget as Error).message).not.toContain('Author');
      // null (unset) is a fine value for a pointer.
      expect(normalizeWhere({ author: null, owner: { $in: [null, 'u1'] } }, fields)).toEqual({
        author: null,
        owner: { $in: [null, pointer('_User', 'u1')] },
      });
    });

    it('normalizes $in, $nin, $ne and $eq operands', () => {
      const out = normalizeWhere(
        {
          author: { $in: ['a1', 'Author$a2', pointer('Author', 'a3')] },
          owner: { $nin: ['u1'], $ne: 'u2' },
        },
        { ...fields, reviewer: { type: 'Pointer', targetClass: 'Author' } },
      );
      expect(out).toEqual({
        author: {
          $in: [pointer('Author', 'a1'), pointer('Author', 'a2'), pointer('Author', 'a3')],
        },
        owner: { $nin: [pointer('_User', 'u1')], $ne: pointer('_User', 'u2') },
      });
      expect(normalizeWhere({ author: { $eq: 'a1' } }, fields)).toEqual({
        author: { $eq: pointer('Author', 'a1') },
      });
    });

    it('leaves full Pointer objects and non-value operators as they are', () => {
      const subquery = { className: 'Author', where: { name: 'Ada' } };
      const out = normalizeWhere(
        { author: pointer('Author', 'a1'), owner: { $exists: true, $inQuery: subquery } },
        fields,
      );
      expect(out).toEqual({
        author: pointer('Author', 'a1'),
        owner: { $exists: true, $inQuery: subquery },
      });
      expect((out.owner as Where).$inQuery).toBe(subquery);
    });
  });

  describe('pointer writes (checkPointerWrite)', () => {
    it('takes null, a Delete op or a Pointer of the column class, and refuses the rest', () => {
      for (const value of [null, undefined, { __op: 'Delete' }, pointer('Author', 'a1')]) {
        expect(() => checkPointerWrite('author', value, 'Author')).not.toThrow();
      }
      for (const value of [
        pointer('Publisher', 'p1'),
        { __type: 'Pointer', className: 'Author' },
        'a1',
        { objectId: 'a1' },
        7,
      ]) {
        const error = thrownBy(() => checkPointerWrite('author', value, 'Author'));
        expect(error).toBeInstanceOf(PointerShapeError);
        expect((error as PointerShapeError).details).toEqual({
          field: 'author',
          expected_class: 'Author',
        });
      }
      const hidden = thrownBy(() => checkPointerWrite('author', 'a1', 'Author', true));
      expect((hidden as PointerShapeError).details?.expected_class).toBe('<targetClass>');
      expect((hidden as Error).message).not.toContain('Author');
    });
  });

  describe('date fields', () => {
    it('turns ISO strings into Parse dates, for equality and ranges', () => {
      expect(
        normalizeWhere(
          {
            publishedAt: {
              $gte: '2024-05-01T00:00:00Z',
              $lt: '2024-05-02T02:00:00+02:00',
            },
          },
          fields,
        ),
      ).toEqual({
        publishedAt: {
          $gte: { __type: 'Date', iso: '2024-05-01T00:00:00.000Z' },
          $lt: { __type: 'Date', iso: '2024-05-02T00:00:00.000Z' },
        },
      });
      expect(normalizeWhere({ publishedAt: '2024-05-01T10:30:00.000Z' }, fields)).toEqual({
        publishedAt: { __type: 'Date', iso: '2024-05-01T10:30:00.000Z' },
      });
    });

    it('refuses a string that is not a date as invalid_argument, naming the field', () => {
      for (const where of [
        { publishedAt: 'yesterday' },
        { publishedAt: { $gte: 'last week' } },
        { publishedAt: { $in: ['2024-01-01T00:00:00Z', 'soon'] } },
      ]) {
        const error = thrownBy(() => normalizeWhere(where, fields));
        expect(error).toBeInstanceOf(AgentValidationError);
        expect((error as Error).message).toContain('publishedAt');
      }
    });

    it('leaves Parse date objects and $exists alone', () => {
      const date = { __type: 'Date', iso: '2024-05-01T00:00:00.000Z' };
      expect(normalizeWhere({ publishedAt: date }, fields)).toEqual({ publishedAt: date });
      expect(normalizeWhere({ publishedAt: { $exists: false } }, fields)).toEqual({
        publishedAt: { $exists: false },
      });
    });
  });

  it('leaves other fields untouched, even when their values look like ids or dates', () => {
    const where = {
      title: 'Author$a1',
      views: { $gt: '2024-01-01' },
      'author.name': 'Ada',
      unknown: 'x',
    };
    expect(normalizeWhere(where, fields)).toEqual(where);
  });

  it('normalizes inside nested $and, $or and $nor', () => {
    const out = normalizeWhere(
      {
        $or: [
          { author: 'a1' },
          { $and: [{ publishedAt: { $gt: '2024-01-01T00:00:00Z' } }, { title: 'x' }] },
        ],
        $nor: [{ owner: 'u1' }],
      },
      fields,
    );
    expect(out).toEqual({
      $or: [
        { author: pointer('Author', 'a1') },
        {
          $and: [
            { publishedAt: { $gt: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' } } },
            { title: 'x' },
          ],
        },
      ],
      $nor: [{ owner: pointer('_User', 'u1') }],
    });
  });

  it('returns a new object and never mutates its input', () => {
    const where = deepFreeze({
      author: { $in: ['a1'] },
      publishedAt: '2024-01-01T00:00:00Z',
      $or: [{ owner: 'u1' }],
    });
    const before = JSON.stringify(where);
    const out = normalizeWhere(where, fields);
    expect(out).not.toBe(where);
    expect(JSON.stringify(where)).toBe(before);
    expect(out.author).not.toBe(where.author);
    expect(out.$or).not.toBe(where.$or);
  });
});

describe('normalizeWhere date strictness', () => {
  const fields = { placedAt: { type: 'Date' } };
  it('refuses non-ISO date strings instead of guessing a time zone', () => {
    expect(() => normalizeWhere({ placedAt: 'Dec 25, 2024' }, fields)).toThrow(/ISO 8601/);
  });
  it('reads a date-time without an offset as UTC', () => {
    expect(normalizeWhere({ placedAt: { $gte: '2026-01-01T10:00' } }, fields)).toEqual({
      placedAt: { $gte: { __type: 'Date', iso: '2026-01-01T10:00:00.000Z' } },
    });
  });
});
