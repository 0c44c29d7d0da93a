import { AgentValidationError } from '../core/errors';
import { checkSearchWhere } from './searchable-where';

describe('checkSearchWhere', () => {
  const check = (where: unknown) => checkSearchWhere(where, 'Ticket', ['status', 'priority']);

  it('passes conditions on filter fields, at any depth of $and/$or/$nor', () => {
    for (const where of [
      undefined,
      { status: 'open' },
      { priority: { $gte: 2 }, status: { $in: ['open', 'pending'] } },
      { $or: [{ status: 'open' }, { $and: [{ priority: 1 }] }] },
      { $nor: [{ status: 'closed' }] },
    ]) {
      expect(check(where)).toEqual(where);
    }
  });

  it.each([
    [{ _rperm: { $in: ['*'] } }, '_rperm'],
    [{ tenant: 'globex' }, 'tenant'],
    [{ 'owner.name': 'x' }, 'owner.name'],
    [{ $or: [{ status: 'open' }, { tenant: 'x' }] }, 'tenant'],
    [{ $and: [{ $or: [{ _wperm: 'x' }] }] }, '_wperm'],
    [{ status: { $in: [{ _p_owner: 'x' }] } }, '_p_owner'],
    [{ status: { $inQuery: { className: 'Ticket', where: {} } } }, '$inQuery'],
    [{ status: { $select: { query: {}, key: 'x' } } }, '$select'],
    [{ $where: 'x' }, '$where'],
    [{ $or: [] }, '$or'],
  ])('refuses %j, naming the key and the accepted fields', (where, key) => {
    let error: unknown;
    try {
      check(where);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AgentValidationError);
    expect((error as Error).message).toContain(key);
    if (key !== '$or') expect((error as Error).message).toContain("'status', 'priority'");
  });

  it('says a class without filter fields takes no where', () => {
    expect(() => checkSearchWhere({ status: 'x' }, 'Note', [])).toThrow(
      /declares no filter fields/,
    );
  });
});
