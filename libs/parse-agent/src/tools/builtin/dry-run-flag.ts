import { AgentValidationError } from '../../core/errors';

/**
 * A tool's `dry_run` argument as a boolean. Anything but true, false or absent is refused: "yes",
 * 1 or "True" meaning a preview to the caller and a real run to the tool is how a preview writes.
 * The argument schemas say `type: boolean` too; this holds wherever a handler is reached.
 */
export function dryRunFlag(value: unknown, name = 'dry_run'): boolean {
  if (value === undefined || typeof value === 'boolean') return value === true;
  throw new AgentValidationError(
    `${name} must be true or false (a JSON boolean), not ${JSON.stringify(value) ?? String(value)}. Nothing ran: pass true to preview or false to run.`,
  );
}
