import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import { jsonRpcParts } from '../../mcp/preserialized';
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
  if (body === undefined) return void res.end('');
  const parts = jsonRpcParts(body);
  if (parts.length === 1) {
    const text = parts[0];
    // A large body goes out as one Buffer: given a string, Node measures it, prepends the headers
    // to it and encodes the whole again on write.
    return void res.end(text.length > LARGE_BODY_CHARS ? Buffer.from(text, 'utf8') : text);
  }
  // A result in pieces (rows quoted for the text, rows again as structured content): each piece
  // is written as it is, in one writev (Node corks the socket for the writes of one tick), so
  // the body is never copied into one flat string first.
  let bytes = 0;
  for (const part of parts) bytes += Buffer.byteLength(part, 'utf8');
  res.setHeader('Content-Length', bytes);
  const last = parts.length - 1;
  for (let i = 0; i < last; i++) res.write(parts[i]);
  res.end(parts[last]);
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
