import {
  confirmationFor,
  DELETES_ASK,
  type ToolConfirmation,
  type WriteTarget,
} from './write-confirmation';

const target = (step: WriteTarget['step'], tier: WriteTarget['tier'] = 'admin'): WriteTarget => ({
  step,
  className: 'Order',
  objectId: 'o1',
  ...(step === 'method' ? { method: 'Order.refund' } : {}),
  tier,
});

describe('confirmationFor', () => {
  it('asks for the declared steps only, in the library’s words unless the declaration has its own', () => {
    expect(confirmationFor(target('delete'), [DELETES_ASK])).toBe(
      'Delete Order o1? This cannot be undone.',
    );
    expect(confirmationFor(target('update', 'write'), [DELETES_ASK])).toBeUndefined();
    expect(confirmationFor(target('delete'), [undefined])).toBeUndefined();
    const own: ToolConfirmation = { asks: ['update'], message: (t) => `Sure about ${t.objectId}?` };
    expect(confirmationFor(target('update', 'write'), [own])).toBe('Sure about o1?');
  });

  it('takes a test of each write (call_method asks for admin methods only)', () => {
    const admin: ToolConfirmation = { asks: (t) => t.step === 'method' && t.tier === 'admin' };
    expect(confirmationFor(target('method', 'admin'), [admin])).toBe(
      'Run Order.refund on o1? It is an admin action.',
    );
    expect(confirmationFor(target('method', 'write'), [admin])).toBeUndefined();
  });

  it('layers declarations: a later one (a policy per tier, say) asks where the tool’s does not', () => {
    const writesAsk: ToolConfirmation = { asks: (t) => t.tier === 'write' };
    expect(confirmationFor(target('create', 'write'), [DELETES_ASK, writesAsk])).toBe(
      'Create an object in Order?',
    );
    // The tool's own question wins when both ask.
    const own: ToolConfirmation = { asks: ['delete'], message: () => 'Tool question' };
    expect(confirmationFor(target('delete'), [own, { asks: () => true }])).toBe('Tool question');
  });
});
