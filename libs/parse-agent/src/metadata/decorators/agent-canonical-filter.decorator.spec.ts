import 'reflect-metadata';
import { ParseAgentConfigError } from '../../core/errors';
import { MetadataRegistry } from '../metadata-registry';
import { AgentCanonicalFilter } from './agent-canonical-filter.decorator';

describe('@AgentCanonicalFilter', () => {
  it('records a valid filter as a frozen copy the caller cannot change afterwards', () => {
    const where = { isDeleted: { $ne: true }, status: { $in: ['open', 'paid'] } };
    @AgentCanonicalFilter(where)
    class Order {}
    where.isDeleted.$ne = false;
    const stored = new MetadataRegistry().register(Order).get('Order')!.canonicalFilter!;
    expect(stored).toEqual({ isDeleted: { $ne: true }, status: { $in: ['open', 'paid'] } });
    expect(Object.isFrozen(stored)).toBe(true);
  });

  it.each([[{}], [[]], [null], ['isDeleted != true']])('refuses %p as a filter', (where) => {
    expect(() => AgentCanonicalFilter(where as never)(class Order {})).toThrow(
      '@AgentCanonicalFilter on Order: pass a non-empty where object',
    );
  });

  it.each([
    [{ $where: 'this.total > 0' }, '$where'],
    [{ total: { $function: { body: 'x' } } }, '$function'],
    [{ $or: [{ a: 1 }, { total: { $accumulator: {} } }] }, '$accumulator'],
    [{ $expr: { $gt: ['$total', 0] } }, '$expr'],
  ])('refuses code-executing operators (%p)', (where, op) => {
    const error = (() => {
      try {
        AgentCanonicalFilter(where)(class Order {});
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a refusal');
    })();
    expect(error).toBeInstanceOf(ParseAgentConfigError);
    expect(error.message).toMatch(/^@AgentCanonicalFilter on Order: /);
    expect(error.message).toContain(op);
    expect(error.message).toContain('Fix the filter.');
  });

  it('refuses internal fields at any depth', () => {
    expect(() => AgentCanonicalFilter({ _rperm: { $in: ['*'] } })(class Order {})).toThrow(
      /@AgentCanonicalFilter on Order: Field '_rperm' is an internal Parse field/,
    );
    expect(() =>
      AgentCanonicalFilter({ $and: [{ $or: [{ authData: { $exists: true } }] }] })(class Order {}),
    ).toThrow(/authData/);
  });

  it('refuses unknown operators', () => {
    expect(() => AgentCanonicalFilter({ tags: { $elemMatch: { a: 1 } } })(class Order {})).toThrow(
      /@AgentCanonicalFilter on Order: Unknown operator '\$elemMatch'/,
    );
  });

  it('writes nothing for a refused filter', () => {
    class Order {}
    expect(() => AgentCanonicalFilter({ $where: 'x' })(Order)).toThrow();
    expect(new MetadataRegistry().register(Order).get('Order')!.canonicalFilter).toBeUndefined();
  });
});
