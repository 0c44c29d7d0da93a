import { AgentValidationError, InvalidQueryError } from '../../core/errors';
import { SqlParams } from './sql-params';
import { compileWhere } from './where-to-sql';

const schema = {
  fields: {
    objectId: { type: 'String' },
    createdAt: { type: 'Date' },
    name: { type: 'String' },
    amount: { type: 'Number' },
    active: { type: 'Boolean' },
    owner: { type: 'Pointer', targetClass: '_User' },
    tags: { type: 'Array' },
    meta: { type: 'Object' },
    place: { type: 'GeoPoint' },
    ACL: { type: 'ACL' },
    members: { type: 'Relation', targetClass: '_User' },
  },
};

function compile(where: unknown) {
  const params = new SqlParams();
  const text = compileWhere(where, schema, params, 't');
  return { text, values: params.values };
}

describe('compileWhere', () => {
  it('reads operator objects made in another realm (a canonical filter kept via structuredClone)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const vm = require('node:vm') as typeof import('node:vm');
    const foreign = vm.runInNewContext('({ active: { $ne: true } })');
    expect(compile(foreign)).toEqual(compile({ active: { $ne: true } }));
    expect(compile(structuredClone({ active: { $ne: true } })).text).toContain('IS DISTINCT FROM');
  });

  it("runs Parse's $within $box on a GeoPoint column as a point-in-box test, values bound", () => {
    const sw = { __type: 'GeoPoint', latitude: 40, longitude: -75 };
    const ne = { __type: 'GeoPoint', latitude: 42, longitude: -72 };
    expect(compile({ place: { $within: { $box: [sw, ne] } } })).toEqual({
      text: '(t."place" <@ box(point($1::float8, $2::float8), point($3::float8, $4::float8)))',
      values: [-75, 40, -72, 42],
    });
    expect(() => compile({ name: { $within: { $box: [sw, ne] } } })).toThrow(
      /\$within filters GeoPoint fields, not String/,
    );
    expect(() => compile({ place: { $within: { $box: [sw] } } })).toThrow(InvalidQueryError);
    expect(() => compile({ place: { $within: { $box: [sw, ne] }, $exists: true } })).toThrow(
      /cannot be combined with \$exists/,
    );
    expect(() => compile({ nowhere: { $within: { $box: [sw, ne] } } })).toThrow(
      AgentValidationError,
    );
    // Other geo constraints stay refused here (Parse REST runs them).
    expect(() => compile({ place: { $nearSphere: sw } })).toThrow(InvalidQueryError);
  });

  it('is TRUE for an empty where', () => {
    expect(compile({})).toEqual({ text: 'TRUE', values: [] });
  });

  it('binds plain equality with the column type', () => {
    expect(compile({ name: 'x' })).toEqual({ text: '(t."name" = $1::text)', values: ['x'] });
    expect(compile({ amount: 3 }).text).toBe('(t."amount" = $1::double precision)');
    expect(compile({ active: true }).values).toEqual([true]);
  });

  it('compiles comparisons, $in/$nin and $ne null-safely', () => {
    expect(compile({ amount: { $gte: 1, $lt: 5 } })).toEqual({
      text: '((t."amount" >= $1::double precision) AND (t."amount" < $2::double precision))',
      values: [1, 5],
    });
    expect(compile({ name: { $in: ['a', 'b'] } })).toEqual({
      text: '(t."name" = ANY($1::text[]))',
      values: [['a', 'b']],
    });
    expect(compile({ name: { $in: ['a', null] } }).text).toContain('t."name" IS NULL');
    expect(compile({ name: { $nin: ['a'] } }).text).toBe(
      '(NOT COALESCE(t."name" = ANY($1::text[]), FALSE))',
    );
    expect(compile({ name: { $ne: 'a' } }).text).toBe('(t."name" IS DISTINCT FROM $1::text)');
    expect(compile({ name: null }).text).toBe('(t."name" IS NULL)');
    expect(compile({ name: { $exists: true } }).text).toBe('(t."name" IS NOT NULL)');
  });

  it('takes pointers as objects or bare objectIds and dates as {__type:Date}', () => {
    expect(compile({ owner: { __type: 'Pointer', className: '_User', objectId: 'u1' } })).toEqual({
      text: '(t."owner" = $1::text)',
      values: ['u1'],
    });
    expect(
      compile({ owner: { $in: ['u1', { __type: 'Pointer', objectId: 'u2' }] } }).values,
    ).toEqual([['u1', 'u2']]);
    expect(() =>
      compile({ owner: { __type: 'Pointer', className: 'Other', objectId: 'x' } }),
    ).toThrow(AgentValidationError);
    expect(
      compile({ createdAt: { $gt: { __type: 'Date', iso: '2024-01-01T00:00:00Z' } } }),
    ).toEqual({
      text: '(t."createdAt" > $1::timestamptz)',
      values: ['2024-01-01T00:00:00.000Z'],
    });
    expect(() => compile({ createdAt: { $gt: { __type: 'Date', iso: 'soon' } } })).toThrow(
      AgentValidationError,
    );
  });

  it('uses jsonb containment for arrays and bound paths for objects', () => {
    expect(compile({ tags: 'a' })).toEqual({ text: '(t."tags" @> $1::jsonb)', values: ['["a"]'] });
    expect(compile({ tags: { $all: ['a', 'b'] } }).text).toBe(
      `(jsonb_typeof(t."tags") = 'array' AND t."tags" @> $1::jsonb)`,
    );
    expect(compile({ tags: { $in: ['a', 'b'] } }).values).toEqual([['["a"]', '["b"]']]);
    const dotted = compile({ 'meta.score': { $gt: 2 } });
    expect(dotted.text).toBe(
      '(jsonb_typeof((t."meta" #> $1::text[])) = jsonb_typeof($2::jsonb) AND (t."meta" #> $1::text[]) > $2::jsonb)',
    );
    expect(dotted.values).toEqual([['score'], '2']);
  });

  it('compiles $regex with option i only', () => {
    expect(compile({ name: { $regex: '^a', $options: 'i' } })).toEqual({
      text: '(t."name" ~* $1)',
      values: ['^a'],
    });
    expect(() => compile({ name: { $regex: 'a', $options: 'x' } })).toThrow(/only 'i'/);
    expect(() => compile({ amount: { $regex: 'a' } })).toThrow(InvalidQueryError);
  });

  it('compiles $or, $and and a NULL-safe $nor', () => {
    expect(compile({ $or: [{ name: 'a' }, { amount: 1 }] }).text).toBe(
      '((t."name" = $1::text) OR (t."amount" = $2::double precision))',
    );
    expect(compile({ $nor: [{ name: 'a' }] }).text).toBe(
      '(NOT COALESCE(((t."name" = $1::text)), FALSE))',
    );
    expect(() => compile({ $or: [] })).toThrow(InvalidQueryError);
  });

  it('refuses unsupported operators with the supported list', () => {
    for (const where of [
      { owner: { $select: {} } },
      { owner: { $inQuery: {} } },
      { $relatedTo: {} },
      { name: { $text: { $search: 'x' } } },
      { place: { $nearSphere: {} } },
      { $where: 'sleep(1)' },
      { $expr: {} },
    ]) {
      expect(() => compile(where)).toThrow(/not supported|cannot filter/);
    }
    expect(() => compile({ name: { $foo: 1 } })).toThrow(/Supported: \$and, \$or, \$nor/);
  });

  it('refuses unknown, non-column and inherited field names', () => {
    for (const name of ['nope', 'ACL', 'members', '_rperm', 'constructor', '__proto__', 'name.x']) {
      expect(() => compile({ [name]: 'x' })).toThrow(/Unknown field|dotted path/);
    }
  });

  it("names no column of the class when it refuses a field (the agent's allowlist is not known here)", () => {
    expect(() => compile({ nope: 'x' })).toThrow(/get_schema lists the fields you can use/);
    expect(() => compile({ nope: 'x' })).not.toThrow(/amount|active|owner/);
    // Rows a pipeline stage shaped carry only fields the agent may use: those are listed.
    const stage = { fields: { _id: { type: 'String' }, n: { type: 'Number' } }, listable: true };
    expect(() => compileWhere({ nope: 1 }, stage, new SqlParams())).toThrow(
      /Fields you can filter on: _id, n\./,
    );
  });

  it('refuses values of the wrong type instead of casting them', () => {
    expect(() => compile({ amount: '1; DROP' })).toThrow(AgentValidationError);
    expect(() => compile({ amount: Infinity })).toThrow(AgentValidationError);
    expect(() => compile({ active: 'true' })).toThrow(AgentValidationError);
    expect(() => compile({ meta: { $gt: {} } })).toThrow(InvalidQueryError);
  });
});
