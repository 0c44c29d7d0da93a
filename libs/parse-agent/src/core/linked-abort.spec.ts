import { getEventListeners } from 'node:events';
import { linkedAbort } from './linked-abort';

describe('linkedAbort', () => {
  it('aborts with the reason of the first source that aborts', () => {
    const a = new AbortController();
    const b = new AbortController();
    const link = linkedAbort([a.signal, undefined, b.signal]);
    expect(link.signal.aborted).toBe(false);
    b.abort('second');
    a.abort('first');
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe('second');
  });

  it('starts aborted when a source already is, and listens to nothing then', () => {
    const a = new AbortController();
    const b = new AbortController();
    b.abort(new Error('gone'));
    const link = linkedAbort([a.signal, b.signal]);
    expect(link.signal.aborted).toBe(true);
    expect((link.signal.reason as Error).message).toBe('gone');
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
  });

  it('abort() aborts the linked signal only, with the given reason', () => {
    const source = new AbortController();
    const link = linkedAbort([source.signal]);
    link.abort('timeout');
    expect(link.signal.reason).toBe('timeout');
    expect(source.signal.aborted).toBe(false);
    expect(getEventListeners(source.signal, 'abort')).toHaveLength(0);
  });

  it('dispose() detaches from long-lived sources without aborting', () => {
    const shared = new AbortController();
    for (let i = 0; i < 100; i++) linkedAbort([shared.signal]).dispose();
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    const link = linkedAbort([shared.signal]);
    link.dispose();
    shared.abort('late');
    expect(link.signal.aborted).toBe(false);
  });

  it('with no sources is a plain controller', () => {
    const link = linkedAbort([]);
    expect(link.signal.aborted).toBe(false);
    link.abort();
    expect(link.signal.aborted).toBe(true);
  });
});
