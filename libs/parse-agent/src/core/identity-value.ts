import { AgentUnauthorizedError } from './errors';

/** Nothing but whitespace (Unicode spaces, line breaks, BOM) and zero-width characters. */
const BLANK = /^[\s\u200b-\u200d\u2060]*$/;

/** The `reason` of the refusal of an identity property that is present but unusable. */
export const BLANK_IDENTITY_REASON = 'blank_identity';

/**
 * Reads one identity property (sessionToken, aclUser, aclRole, tenantId) as it was given:
 * undefined when it was not given at all (absent or undefined), the string when it is a
 * non-blank string. Anything else present (an empty or whitespace-only string, null, a number,
 * an object) is refused with AgentUnauthorizedError: a credential that is there but empty means
 * the caller meant someone and lost them on the way, and reading it as "no identity" would hand
 * out the master key. The message names the property, never its value.
 */
export function identityValue(property: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && !BLANK.test(value)) return value;
  throw new AgentUnauthorizedError(
    `${property} is ${describeUnusable(value)}. An identity that is given must be a non-blank string: the agent is refused rather than run with the master key. Pass the real value, or leave ${property} out (undefined) only where no identity is meant.`,
    { reason: BLANK_IDENTITY_REASON },
  );
}

function describeUnusable(value: unknown): string {
  if (value === '') return 'an empty string';
  if (typeof value === 'string') return 'blank (whitespace or invisible characters only)';
  if (value === null) return 'null';
  return `not a string (${Array.isArray(value) ? 'an array' : typeof value})`;
}
