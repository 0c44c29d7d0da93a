import { AgentUnauthorizedError } from './errors';
import { BLANK_IDENTITY_REASON, identityValue } from './identity-value';
import { blankStrings, NOT_STRINGS } from '../../../../test/fixtures/blank-identities';

function refusalOf(work: () => unknown): AgentUnauthorizedError {
  try {
    work();
  } catch (error) {
    if (error instanceof AgentUnauthorizedError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('identityValue', () => {
  it('reads an absent property as not given', () => {
    expect(identityValue('sessionToken', undefined)).toBeUndefined();
  });

  it('refuses every blank string, naming the property and never echoing the value', () => {
    for (const blank of blankStrings()) {
      const error = refusalOf(() => identityValue('sessionToken', blank));
      expect(error.reason).toBe(BLANK_IDENTITY_REASON);
      expect(error.message).toMatch(/^sessionToken is (an empty string|blank)/);
    }
  });

  it('refuses every present value that is not a string', () => {
    for (const value of NOT_STRINGS) {
      const error = refusalOf(() => identityValue('tenantId', value));
      expect(error.message).toMatch(/^tenantId is (null|not a string)/);
      expect(error.reason).toBe(BLANK_IDENTITY_REASON);
    }
  });

  it('returns a usable value unchanged, surrounding spaces included (Parse judges the token)', () => {
    for (const value of ['r:abc', ' r:abc ', 'acme', '\u200bx', 'a b']) {
      expect(identityValue('sessionToken', value)).toBe(value);
    }
  });
});
