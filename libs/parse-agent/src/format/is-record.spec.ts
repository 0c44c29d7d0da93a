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

describe('isRecord across realms', () => {
  it('accepts plain objects made by structuredClone or another vm context', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const vm = require('node:vm') as typeof import('node:vm');
    expect(isRecord(structuredClone({ a: { b: 1 } }))).toBe(true);
    expect(isRecord(vm.runInNewContext('({ a: 1 })'))).toBe(true);
    expect(isRecord(vm.runInNewContext('[1, 2]'))).toBe(false);
    expect(isRecord(new Date())).toBe(false);
  });
});
