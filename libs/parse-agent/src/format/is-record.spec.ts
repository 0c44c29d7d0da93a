import { isRecord } from './is-record';

describe('isRecord', () => {
  it('accepts plain and null-prototype objects only', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord(JSON.parse('{"a":1}'))).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
    expect(isRecord([])).toBe(false);
    expect(isRecord(null)).toBe(false);
    expect(isRecord(new Date())).toBe(false);
    expect(isRecord(new (class Model {})())).toBe(false);
    expect(isRecord('x')).toBe(false);
  });
});
