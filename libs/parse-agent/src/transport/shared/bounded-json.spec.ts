import { jsonNestingDepth, parseBoundedJson, valueNestingDepth } from './bounded-json';

describe('bounded JSON parsing', () => {
  it('counts nesting outside strings only', () => {
    expect(jsonNestingDepth('{}')).toBe(1);
    expect(jsonNestingDepth('{"a":[{"b":[]}]}')).toBe(4);
    expect(jsonNestingDepth('{"a":"[[[[{{{{"}')).toBe(1);
    expect(jsonNestingDepth('{"a":"\\"[[["}')).toBe(1);
    expect(jsonNestingDepth('"\\\\"')).toBe(0);
    expect(jsonNestingDepth('[1, 2]')).toBe(1);
  });

  it('stops scanning once past the limit', () => {
    expect(jsonNestingDepth('['.repeat(1_000_000), 20)).toBe(21);
  });

  it('accepts depth 20, refuses 21, and parses an empty body as {}', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    expect(parseBoundedJson(nested(20), 20)).toEqual({ ok: true, value: expect.any(Array) });
    expect(parseBoundedJson(nested(21), 20)).toEqual({ ok: false });
    expect(parseBoundedJson('', 20)).toEqual({ ok: true, value: {} });
  });

  it('refuses invalid JSON', () => {
    for (const text of ['{', 'undefined', "{'a':1}", '{"a":1,}', '\ufeff{}']) {
      expect(parseBoundedJson(text, 20)).toEqual({ ok: false });
    }
    expect(parseBoundedJson(' {"method":"ping"} ', 20)).toEqual({
      ok: true,
      value: { method: 'ping' },
    });
  });

  it('measures parsed values the same way, iteratively', () => {
    expect(valueNestingDepth({})).toBe(1);
    expect(valueNestingDepth({ a: [{ b: [] }] })).toBe(4);
    expect(valueNestingDepth('text')).toBe(0);
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(valueNestingDepth(deep, 20)).toBe(21);
  });
});
