import * as crypto from 'node:crypto';

jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, timingSafeEqual: jest.fn(actual.timingSafeEqual) };
});

import { secretsEqual } from './secrets-equal';

const timingSafeEqual = crypto.timingSafeEqual as jest.MockedFunction<
  typeof crypto.timingSafeEqual
>;

describe('secretsEqual', () => {
  beforeEach(() => timingSafeEqual.mockClear());

  it('accepts the exact key and refuses any other', () => {
    expect(secretsEqual('operator-key', 'operator-key')).toBe(true);
    expect(secretsEqual('operator-kez', 'operator-key')).toBe(false);
    expect(secretsEqual('OPERATOR-KEY', 'operator-key')).toBe(false);
    expect(secretsEqual('operator-key ', 'operator-key')).toBe(false);
    expect(secretsEqual('', 'operator-key')).toBe(false);
  });

  it('compares equal-length digests with timingSafeEqual whatever the input lengths', () => {
    // A plain timingSafeEqual throws on different lengths, and === leaks the first difference.
    expect(secretsEqual('k', 'a-much-longer-operator-key')).toBe(false);
    expect(secretsEqual('a-much-longer-operator-key', 'a-much-longer-operator-key')).toBe(true);
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
    for (const [a, b] of timingSafeEqual.mock.calls) {
      expect((a as Buffer).length).toBe(32);
      expect((b as Buffer).length).toBe(32);
    }
  });

  it('matches nothing when no key is configured, not even an empty one', () => {
    expect(secretsEqual('', '')).toBe(false);
    expect(secretsEqual('x', undefined as unknown as string)).toBe(false);
    expect(secretsEqual(undefined as unknown as string, 'x')).toBe(false);
  });
});
