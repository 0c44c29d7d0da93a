import { ParseAgentConfigError } from '../core/errors';
import { normalizeListFilter, passesListFilter } from './class-filter';

const same = (entry: string) => [entry];

describe('normalizeListFilter', () => {
  it('returns undefined when no filter is configured', () => {
    expect(normalizeListFilter(undefined, 'tools', same)).toBeUndefined();
    expect(normalizeListFilter(null, 'tools', same)).toBeUndefined();
  });

  it('reads an array as an allowlist', () => {
    const filter = normalizeListFilter(['a', 'b'], 'tools', same)!;
    expect([...filter.only!]).toEqual(['a', 'b']);
    expect(filter.except.size).toBe(0);
  });

  it('reads { only, except }, each optional', () => {
    const both = normalizeListFilter({ only: ['a'], except: ['b'] }, 'tools', same)!;
    expect([...both.only!]).toEqual(['a']);
    expect([...both.except]).toEqual(['b']);
    const exceptOnly = normalizeListFilter({ except: ['b'] }, 'tools', same)!;
    expect(exceptOnly.only).toBeUndefined();
    expect([...exceptOnly.except]).toEqual(['b']);
  });

  it('expands each entry through toNames', () => {
    const variants = (name: string) => [name, name.replace(/^_/, '')];
    const filter = normalizeListFilter(
      { only: ['_User'], except: ['_Role'] },
      'classes',
      variants,
    )!;
    expect([...filter.only!].sort()).toEqual(['User', '_User']);
    expect([...filter.except].sort()).toEqual(['Role', '_Role']);
  });

  it('refuses unknown keys, naming them and the option', () => {
    expect(() =>
      normalizeListFilter({ only: ['a'], allow: ['b'] } as never, 'classes', same),
    ).toThrow(
      new ParseAgentConfigError(
        'classes: unknown key(s) allow; use { only: [...] } and/or { except: [...] }.',
      ),
    );
  });

  it('refuses non-array only/except and inputs of the wrong type', () => {
    expect(() => normalizeListFilter({ only: 'a' } as never, 'tools', same)).toThrow(
      'tools.only must be an array.',
    );
    expect(() => normalizeListFilter({ except: 'a' } as never, 'tools', same)).toThrow(
      'tools.except must be an array.',
    );
    expect(() => normalizeListFilter('a' as never, 'tools', same)).toThrow(ParseAgentConfigError);
    expect(() => normalizeListFilter(3 as never, 'tools', same)).toThrow(
      'tools must be an array or { only, except }.',
    );
  });
});

describe('passesListFilter', () => {
  it('lets everything through without a filter', () => {
    expect(passesListFilter(undefined, ['anything'])).toBe(true);
  });

  it('requires one of the names to be in only', () => {
    const filter = normalizeListFilter(['Order'], 'classes', same);
    expect(passesListFilter(filter, ['Order'])).toBe(true);
    expect(passesListFilter(filter, ['Customer', 'Order'])).toBe(true);
    expect(passesListFilter(filter, ['Customer'])).toBe(false);
  });

  it('lets except win over only', () => {
    const filter = normalizeListFilter({ only: ['Order'], except: ['Order'] }, 'classes', same);
    expect(passesListFilter(filter, ['Order'])).toBe(false);
  });

  it('refuses when any name variant is excepted', () => {
    const filter = normalizeListFilter({ except: ['User'] }, 'classes', same);
    expect(passesListFilter(filter, ['_User', 'User'])).toBe(false);
    expect(passesListFilter(filter, ['_Role', 'Role'])).toBe(true);
  });

  it('lets an empty only allow nothing', () => {
    expect(passesListFilter(normalizeListFilter([], 'classes', same), ['Order'])).toBe(false);
  });
});
