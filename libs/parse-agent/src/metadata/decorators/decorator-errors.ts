import { ParseAgentConfigError } from '../../core/errors';

/** A misused decorator: the message names the model and says how to fix it. */
export function decoratorError(
  decorator: string,
  target: { name?: string },
  problem: string,
): ParseAgentConfigError {
  return new ParseAgentConfigError(`@${decorator} on ${target.name ?? 'a class'}: ${problem}`);
}
