/**
 * A method failed for a reason that is not the client's input (an upstream timeout, a rate limit):
 * answered with its own JSON-RPC code and message instead of "Invalid params".
 */
export class McpMethodError extends Error {
  override name = 'McpMethodError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
