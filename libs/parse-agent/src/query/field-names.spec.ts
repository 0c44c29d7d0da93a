import { fieldSpellings, isPlainObject, toCamelCase, toSnakeCase } from './field-names';

describe('toCamelCase', () => {
  it.each([
    ['first_name', 'firstName'],
    ['tenant_id', 'tenantId'],
    ['FirstName', 'firstName'],
    ['address_line_2', 'addressLine2'],
    ['name', 'name'],
  ])('%s -> %s', (input, output) => expect(toCamelCase(input)).toBe(output));

  it('leaves _-prefixed (Parse internal) names unchanged', () => {
    expect(toCamelCase('_hashed_password')).toBe('_hashed_password');
  });
});

describe('toSnakeCase', () => {
  it.each([
    ['firstName', 'first_name'],
    ['tenantId', 'tenant_id'],
    ['addressLine2', 'address_line2'],
    ['tenant_id', 'tenant_id'],
    ['name', 'name'],
  ])('%s -> %s', (input, output) => expect(toSnakeCase(input)).toBe(output));

  it('leaves _-prefixed (Parse internal) names unchanged', () => {
    expect(toSnakeCase('_sessionToken')).toBe('_sessionToken');
  });
});

describe('fieldSpellings', () => {
  it('lists the name as given, then its camelCase and snake_case forms, without duplicates', () => {
    expect(fieldSpellings('tenantId')).toEqual(['tenantId', 'tenant_id']);
    expect(fieldSpellings('tenant_id')).toEqual(['tenant_id', 'tenantId']);
    expect(fieldSpellings('name')).toEqual(['name']);
  });
});

describe('isPlainObject', () => {
  it('accepts objects and refuses arrays, null and primitives', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject({ a: 1 })).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    expect(isPlainObject([])).toBe(false);
    expect(isPlainObject(null)).toBe(false);
    expect(isPlainObject(undefined)).toBe(false);
    expect(isPlainObject('x')).toBe(false);
    expect(isPlainObject(1)).toBe(false);
  });
});
