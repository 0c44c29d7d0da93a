import { AgentValidationError } from '../core/errors';

/** Class and field names a prompt may interpolate: a Parse identifier, at most 128 characters. */
export const PROMPT_IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Object ids a prompt may interpolate. */
export const PROMPT_OBJECT_ID_PATTERN = /^[A-Za-z0-9]{1,32}$/;

/** Prompt arguments after normalisation: present values are strings. */
export type PromptArgs = Readonly<Record<string, string | undefined>>;

/**
 * Prompt renderers interpolate argument values into text a model will follow, so each value a
 * built-in prompt uses is checked against a narrow shape first. Every failure is a validation
 * error whose message the client sees (JSON-RPC -32602).
 */
export function requireArg(args: PromptArgs, name: string): string {
  const value = args[name];
  if (value === undefined || value.trim() === '') {
    throw new AgentValidationError(`missing required argument: ${name}`);
  }
  return value;
}

export function identifierArg(value: string, label: string): string {
  if (!PROMPT_IDENTIFIER_PATTERN.test(value)) {
    throw new AgentValidationError(
      `${label} must match ${PROMPT_IDENTIFIER_PATTERN.source} (got: "${value}")`,
    );
  }
  return value;
}

export function objectIdArg(value: string, label: string): string {
  if (!PROMPT_OBJECT_ID_PATTERN.test(value)) {
    throw new AgentValidationError(`${label} must be an alphanumeric objectId (got: "${value}")`);
  }
  return value;
}

// Date, optional time (hh:mm, optional seconds and fraction), optional zone. No zone means UTC.
const ISO8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Parses an ISO 8601 timestamp strictly (no `Date.parse` guessing: calendar fields must exist)
 * and returns it in UTC with milliseconds, e.g. `2024-01-01T00:00:00.000Z`.
 */
export function iso8601Arg(value: string, label: string): string {
  const invalid = () =>
    new AgentValidationError(`${label} must be a valid ISO8601 timestamp (got: "${value}")`);
  const match = ISO8601.exec(value.trim());
  if (!match) throw invalid();
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '', zone = 'Z'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number);
  const ms = fraction ? Math.floor(Number(`0${fraction}`) * 1000) : 0;
  const local = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(local);
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw invalid();
  }
  return new Date(local - zoneOffsetMs(zone)).toISOString();
}

function zoneOffsetMs(zone: string): number {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  return sign * (hours * 60 + minutes) * 60_000;
}
