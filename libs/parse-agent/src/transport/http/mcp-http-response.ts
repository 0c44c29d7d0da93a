import type { ServerResponse } from 'node:http';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import { stringifyJsonRpc } from '../../mcp/preserialized';
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
  res.end(body === undefined ? '' : stringifyJsonRpc(body));
}

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
