import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import { stringifyJsonRpc } from '../../mcp/preserialized';
import { SSE_HEADERS } from './mcp-http.constants';
import { jsonRpcError } from './transport-checks';

/** Writes a JSON response with the Node API (works under any Express version or none). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json');
  const text = body === undefined ? '' : stringifyJsonRpc(body);
  // A large body goes out as one Buffer: given a string, Node measures it, prepends the headers
  // to it and encodes the whole again on write, copying a result of 100 rows three times.
  res.end(text.length > LARGE_BODY_CHARS ? Buffer.from(text, 'utf8') : text);
}

/** Above this many characters a JSON body is encoded once into a Buffer before it is written. */
const LARGE_BODY_CHARS = 2048;

/** A JSON-RPC error envelope with the given HTTP status. */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  options: { id?: JsonRpcId; headers?: Record<string, string> } = {},
): void {
  sendJson(res, status, jsonRpcError(code, message, options.id ?? null), options.headers);
}

/** The fixed 401 body: never says why (no reason, no error class). */
export function sendUnauthorized(res: ServerResponse): void {
  sendJsonRpcError(res, 401, -32001, 'Unauthorized');
}

/** Writes the head of an SSE response (status 200, the SSE headers and `headers`) at once. */
export function openEventStream(
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string> = {},
): void {
  const sse: Record<string, string> = { ...SSE_HEADERS, ...headers };
  // Connection-specific headers are not allowed on HTTP/2.
  if ((req.httpVersionMajor ?? 1) >= 2) delete sse.Connection;
  res.writeHead(200, sse);
  res.flushHeaders();
}
