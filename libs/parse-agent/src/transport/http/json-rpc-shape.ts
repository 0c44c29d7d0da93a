/** What the body of an accepted POST is. */
export type McpBodyKind = 'request' | 'notification' | 'response';

/**
 * A method (request with a string or number id, or notification without one), or a well-formed
 * JSON-RPC response from the client. Anything else is an invalid request.
 */
export function bodyKind(value: unknown): McpBodyKind | undefined {
  return invalidRequestProblem(value) === undefined
    ? kindOf(value as Record<string, unknown>)
    : undefined;
}

function kindOf(body: Record<string, unknown>): McpBodyKind {
  if ('method' in body) return 'id' in body && body.id !== null ? 'request' : 'notification';
  return 'response';
}

/** Why a body is not a JSON-RPC 2.0 message (for the 400), or undefined when it is one. */
export function invalidRequestProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'the body must be one JSON-RPC message (an object; batches are not supported)';
  }
  const body = value as Record<string, unknown>;
  if (body.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  // `id: null` is tolerated on notifications/* only (they do nothing and get no reply).
  const nullIdNotification =
    body.id === null && typeof body.method === 'string' && body.method.startsWith('notifications/');
  if ('id' in body && validIdOf(body) === null && !nullIdNotification) {
    return 'id must be a string or a number';
  }
  if ('method' in body) {
    if (typeof body.method !== 'string' || body.method === '') {
      return 'method must be a non-empty string';
    }
    // MCP's notifications are one-way: one sent with an id expects an answer none will give.
    if (body.method.startsWith('notifications/') && 'id' in body && body.id !== null) {
      return `${body.method} is a notification: send it without an id`;
    }
    return undefined;
  }
  if (!('id' in body) || 'result' in body === 'error' in body) {
    return 'expected a method, or a response with an id and one of result or error';
  }
  return undefined;
}

/** The body's id when it is a valid JSON-RPC id (echoed in refusals), else null. */
export function validIdOf(value: unknown): string | number | null {
  const id = (value as Record<string, unknown> | null)?.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}
