/** Where the operator key is presented (the MCP transport treats it as a credential header). */
export const API_KEY_HEADER = 'x-mcp-api-key';

type Headers = Record<string, string | string[] | undefined>;

const single = (value: string | string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerTokenOf(headers: Headers | undefined): string | undefined {
  return single(headers?.authorization)?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
}

/** The operator key presented in `X-MCP-API-Key`, or undefined (repeated headers count as none). */
export function apiKeyOf(headers: Headers | undefined): string | undefined {
  const key = single(headers?.[API_KEY_HEADER]);
  return key ? key : undefined;
}

/**
 * Whether a request may open an MCP session (`initialize`). A POST whose body is still unread (the
 * transport defers bodies over its pre-auth limit until the guards accept) might be one, so it
 * counts as one: such requests get a fresh session check rather than a cached answer.
 */
export function mayOpenMcpSession(method: string | undefined, body: unknown): boolean {
  if (method !== 'POST') return false;
  if (body === undefined) return true;
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (m) =>
      typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize',
  );
}
