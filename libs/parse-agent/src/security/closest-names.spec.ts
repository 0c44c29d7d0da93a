import { closestNames } from './closest-names';

describe('closestNames', () => {
  const classes = ['Customer', 'Order', 'Product', 'SupportTicket', 'Tenant', '_User'];

  it('suggests near spellings and plural or prefixed forms', () => {
    expect(closestNames('Custmer', classes)).toEqual(['Customer']);
    expect(closestNames('Orders', classes)).toEqual(['Order']);
    expect(closestNames('User', classes)).toEqual(['_User']);
    expect(closestNames('order', classes)).toEqual(['Order']);
  });

  it('suggests nothing for an unrelated name, and only from the candidates given', () => {
    expect(closestNames('ApiCredential', classes)).toEqual([]);
    expect(closestNames('Custmer', ['Order'])).toEqual([]);
  });
});
