import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the demo's log lines say about the request they belong to. */
export interface RequestContext {
  requestId: string;
  request: IncomingMessage;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** A caller-supplied id is kept when it is short and plain; anything else is replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Express middleware: gives every request an id (X-Request-Id in, or a new one; echoed on the
 * response) and makes the request reachable from code it triggers (tool-call audit events).
 */
export function requestContextMiddleware(
  req: IncomingMessage,
  res: ServerResponse,
  next: () => void,
): void {
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', requestId);
  storage.run({ requestId, request: req }, next);
}

export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}
