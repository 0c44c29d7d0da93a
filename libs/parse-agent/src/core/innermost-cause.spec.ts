import { innermostCause } from './innermost-cause';

describe('innermostCause', () => {
  it('names the deepest code past fetch’s generic message', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
      code: 'ECONNREFUSED',
    });
    expect(innermostCause(new TypeError('fetch failed', { cause: refused }))).toBe('ECONNREFUSED');
  });

  it('falls back to the deepest message when no code is given', () => {
    const closed = new Error('other side closed');
    expect(innermostCause(new Error('fetch failed', { cause: closed }))).toBe('other side closed');
  });

  it('says nothing for an empty chain or fetch’s message alone', () => {
    expect(innermostCause(undefined)).toBeUndefined();
    expect(innermostCause(new TypeError('fetch failed'))).toBeUndefined();
  });

  it('stops after five links, so a cyclic chain cannot loop', () => {
    const a: { message: string; cause?: unknown } = { message: 'a' };
    a.cause = a;
    expect(innermostCause(a)).toBe('a');
  });
});
