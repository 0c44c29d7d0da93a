import { isPlainObject, isPlainRecord } from './plain-object';

describe('isPlainObject', () => {
  it('accepts any non-null object that is not an array', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    expect(isPlainObject(new (class Model {})())).toBe(true);
    expect(isPlainObject(new Date())).toBe(true);
    expect(isPlainObject([])).toBe(false);
    expect(isPlainObject(null)).toBe(false);
    expect(isPlainObject('x')).toBe(false);
  });
});

describe('isPlainRecord', () => {
  it('accepts plain and null-prototype objects only', () => {
    expect(isPlainRecord({})).toBe(true);
    expect(isPlainRecord(JSON.parse('{"a":1}'))).toBe(true);
    expect(isPlainRecord(Object.create(null))).toBe(true);
    expect(isPlainRecord([])).toBe(false);
    expect(isPlainRecord(null)).toBe(false);
    expect(isPlainRecord(new Date())).toBe(false);
    expect(isPlainRecord(new (class Model {})())).toBe(false);
    expect(isPlainRecord('x')).toBe(false);
    expect(isPlainRecord({ [Symbol.toStringTag]: 'Thing' })).toBe(false);
  });

  it('accepts plain objects made by structuredClone or another vm context', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const vm = require('node:vm') as typeof import('node:vm');
    expect(isPlainRecord(structuredClone({ a: { b: 1 } }))).toBe(true);
    expect(isPlainRecord(vm.runInNewContext('({ a: 1 })'))).toBe(true);
    expect(isPlainRecord(vm.runInNewContext('[1, 2]'))).toBe(false);
    expect(isPlainRecord(vm.runInNewContext('new Date()'))).toBe(false);
  });
});
