import { fieldSpellings, toCamelCase, toSnakeCase } from './field-names';

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
