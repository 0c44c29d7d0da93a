import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import type { McpRequest } from './mcp-request';
import type { ProgressToken } from './sse-operators';

/** A header's first value, trimmed; undefined when absent, empty or only blanks. */
export function headerValue(req: McpRequest, name: string): string | undefined {
  const value = req.headers[name];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  return text === undefined || text === '' ? undefined : text;
}

/** The value as a JSON-RPC id when it is a valid one (echoed in answers), else null. */
export function validId(value: unknown): JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
    ? value
    : null;
}

/** The progress token a call asked for (`params._meta.progressToken`). */
export function progressTokenOf(body: Record<string, unknown>): ProgressToken | undefined {
  const params = body.params as Record<string, unknown> | undefined;
  const meta = params && typeof params === 'object' ? params._meta : undefined;
  const token =
    meta && typeof meta === 'object' ? (meta as Record<string, unknown>).progressToken : undefined;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}
