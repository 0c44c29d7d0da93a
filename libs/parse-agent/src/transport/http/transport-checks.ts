/**
 * Pure predicates behind the endpoint's transport checks (origin, custom header, Host, media type),
 * kept free of Nest and Express so they are tested as plain functions.
 */
import type { JsonRpcId, JsonRpcResponse } from '../../mcp/mcp-dispatcher.types';

/** A JSON-RPC error envelope; transport-level refusals use `id: null`. */
export function jsonRpcError(code: number, message: string, id: JsonRpcId = null): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** `application/json; charset=utf-8` → `application/json` (missing → ''). */
export function mediaType(contentType: string | undefined): string {
  return String(contentType ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
}

/** Trimmed, lower-cased, empties dropped; an empty list turns the check off (undefined). */
export function normalizeAllowedOrigins(
  origins: readonly string[] | undefined,
): string[] | undefined {
  const list = (origins ?? []).map((o) => String(o).trim().toLowerCase()).filter(Boolean);
  return list.length ? list : undefined;
}

/**
 * `https://app.example.com` entries match the whole origin exactly; `.example.com` entries match the
 * domain and its subdomains (scheme ignored; an origin with a port does not match a domain entry).
 */
export function isOriginAllowed(origin: string, allowed: readonly string[]): boolean {
  const candidate = origin.trim().toLowerCase();
  const host = candidate.replace(/^https?:\/\//, '');
  return allowed.some((entry) =>
    entry.startsWith('.') ? host === entry.slice(1) || host.endsWith(entry) : candidate === entry,
  );
}

/**
 * A browser Origin on this machine: http(s) with the host `localhost` (or a `*.localhost` name,
 * which browsers resolve to loopback), an address in 127.0.0.0/8 or `[::1]`, any port. `null`
 * (sandboxed frames, `file:` pages) and anything unparsable are not.
 */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin.trim());
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.username || url.password || (url.pathname !== '/' && url.pathname !== '')) return false;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || isLoopbackAddress(host);
}

/** `'X-MCP-Client'` → presence check; `{ 'X-MCP-Client': 'v1' }` → exact value. Blank → off. */
export function normalizeRequiredHeader(
  input: string | Record<string, string> | undefined | null,
): { name: string; value?: string } | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input === 'string') {
    const name = input.trim().toLowerCase();
    return name ? { name } : undefined;
  }
  if (typeof input === 'object' && !Array.isArray(input)) {
    const entries = Object.entries(input);
    if (entries.length !== 1 || typeof entries[0][1] !== 'string') {
      throw new TypeError(
        'requireCustomHeader as an object takes exactly one { "Header-Name": "expected value" } pair.',
      );
    }
    const name = entries[0][0].trim().toLowerCase();
    return name ? { name, value: entries[0][1] } : undefined;
  }
  throw new TypeError(
    `requireCustomHeader must be a header name or { "Header-Name": "expected value" } (got ${Array.isArray(input) ? 'array' : typeof input}).`,
  );
}

/** Present and non-empty, and equal to the expected value when one is configured. */
export function hasRequiredHeader(
  actual: string | string[] | undefined,
  required: { name: string; value?: string },
): boolean {
  const value = Array.isArray(actual) ? actual.join(', ') : (actual ?? '');
  if (!value) return false;
  return required.value === undefined || value === required.value;
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase().replace(/^::ffff:/, '');
  return a === '::1' || /^127(\.\d{1,3}){3}$/.test(a);
}

/** The host name of a Host header, lower-cased, without port or IPv6 brackets. */
export function hostHeaderName(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end > 0 ? value.slice(1, end) : value;
  }
  const colon = value.lastIndexOf(':');
  return colon >= 0 && value.indexOf(':') === colon ? value.slice(0, colon) : value;
}

const LOOPBACK_HOST_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * DNS-rebinding guard for servers listening on loopback: a browser tricked into resolving an
 * attacker's name to 127.0.0.1 still sends that name in Host. No Host at all is not a browser.
 */
export function isHostAllowedOnLoopback(
  host: string | undefined,
  extraHosts: readonly string[] = [],
): boolean {
  if (host === undefined || host === '') return true;
  const name = hostHeaderName(host);
  return LOOPBACK_HOST_NAMES.has(name) || extraHosts.includes(name);
}

/** Original header names containing `_` (proxies may fold them onto trusted dashed names). */
export function underscoreHeaderNames(rawHeaders: readonly string[]): string[] {
  const names: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].includes('_')) names.push(rawHeaders[i].toLowerCase());
  }
  return names;
}

/** The spec's test: the Accept header mentions text/event-stream anywhere. */
export function acceptsEventStream(accept: string | string[] | undefined): boolean {
  const value = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  return value.toLowerCase().includes('text/event-stream');
}
