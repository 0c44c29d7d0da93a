import { AgentValidationError } from '../../core/errors';

/**
 * Quotes a PostgreSQL identifier (table or column). Identifiers only ever come from the class schema
 * or from names this module validated; quoting with doubled quotes is the second line of defence.
 */
export function quoteIdent(name: string): string {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\u0000')) {
    throw new AgentValidationError('An identifier must be a non-empty string without NUL bytes.');
  }
  return `"${name.replace(/"/g, '""')}"`;
}

/** `alias."column"`, or just `"column"` without an alias. Aliases are generated here, never input. */
export function columnRef(name: string, alias?: string): string {
  return alias ? `${alias}.${quoteIdent(name)}` : quoteIdent(name);
}

const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Names an agent gives to computed outputs ($group accumulators, $project renames, $count, $lookup
 * `as`): plain identifiers only, and never the `__` prefix reserved for internal columns.
 */
export function assertOutputName(name: unknown, where: string): string {
  if (typeof name !== 'string' || !OUTPUT_NAME.test(name) || name.startsWith('__')) {
    throw new AgentValidationError(
      `${where}: output name ${JSON.stringify(name)} is not allowed. Use letters, digits and '_' ` +
        `(at most 63, not starting with a digit or '__').`,
    );
  }
  return name;
}
