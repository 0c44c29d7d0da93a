import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A caller's or host's request id is kept when it is short and plain. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const REQUEST_ID_HEADER = 'x-request-id';
const MAX_REASON = 120;

/**
 * The id of the request a log line is about: the one the host's middleware set on the response
 * (X-Request-Id), else the client's X-Request-Id, else a new one, echoed on the response so the
 * client can quote it.
 */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  for (const value of [res.getHeader(REQUEST_ID_HEADER), req.headers[REQUEST_ID_HEADER]]) {
    if (typeof value === 'string' && REQUEST_ID.test(value)) return value;
  }
  const id = randomUUID();
  if (!res.headersSent) res.setHeader('X-Request-Id', id);
  return id;
}

/**
 * The log line of a refused request (the wire answer stays the fixed 401 body): the refusing
 * error's class, the reason the host gave (control characters removed, length capped) and the
 * request id. It starts with "Unauthorized:" so the rate-limited logger groups these lines.
 */
export function unauthorizedLogLine(
  errorClass: string,
  reason: string | undefined,
  requestId: string,
): string {
  // eslint-disable-next-line no-control-regex
  const plain = reason?.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  const shown = plain ? JSON.stringify(plain.slice(0, MAX_REASON)) : 'none given';
  return `Unauthorized: ${errorClass} reason=${shown} request_id=${requestId}`;
}
