/**
 * The endpoint redirected a request somewhere the bridge will not follow: to another origin
 * (scheme, host or port), where the credential headers must never go, or a same-origin redirect
 * that would turn a POST into a GET.
 */
export class BridgeRedirectRefusedError extends Error {
  override readonly name = 'BridgeRedirectRefusedError';
}

/** Redirect statuses; only 307 and 308 keep the method and body. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Same-origin redirects followed per request before giving up. */
const MAX_REDIRECTS = 5;

/**
 * fetch bound to the endpoint's origin. Redirects are never followed by fetch itself: it would
 * carry custom headers such as `X-MCP-API-Key` to whatever host a `Location` names. A redirect
 * within the origin is followed here (307/308 keep the method and body; 301/302/303 only for
 * GET and DELETE, which have no body to lose); one to another origin throws
 * `BridgeRedirectRefusedError` before anything is sent there.
 */
export function sameOriginFetch(
  endpoint: string,
  doFetch: typeof fetch,
): (init: RequestInit) => Promise<Response> {
  const origin = new URL(endpoint).origin;
  return async (init) => {
    let target = endpoint;
    for (let hop = 0; ; hop++) {
      const response = await doFetch(target, { ...init, redirect: 'manual' });
      if (!REDIRECTS.has(response.status)) return response;
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get('location');
      if (!location) return response;
      target = nextHop(endpoint, origin, target, location, response.status, init, hop);
    }
  };
}

/** Where a redirect leads, or the refusal that stops it. */
function nextHop(
  endpoint: string,
  origin: string,
  target: string,
  location: string,
  status: number,
  init: RequestInit,
  hop: number,
): string {
  let next: URL;
  try {
    next = new URL(location, target);
  } catch {
    throw new BridgeRedirectRefusedError(
      `The MCP server at ${endpoint} answered HTTP ${status} with an invalid Location; nothing was sent further.`,
    );
  }
  if (next.origin !== origin) {
    throw new BridgeRedirectRefusedError(
      `The MCP server at ${endpoint} redirected (HTTP ${status}) to another origin, ${next.origin}. The bridge never sends its credential to another origin, so it stopped. If that address is the app's real endpoint, connect to it directly.`,
    );
  }
  const keepsMethod = status === 307 || status === 308;
  if (!keepsMethod && init.method === 'POST') {
    throw new BridgeRedirectRefusedError(
      `The MCP server at ${endpoint} redirected a POST with HTTP ${status}, which would drop the message. Connect to ${next.href} directly.`,
    );
  }
  if (hop + 1 >= MAX_REDIRECTS) {
    throw new BridgeRedirectRefusedError(
      `The MCP server at ${endpoint} redirected more than ${MAX_REDIRECTS} times; check the URL.`,
    );
  }
  return next.href;
}
