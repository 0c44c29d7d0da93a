import { ParseAgentConfigError } from '../core/errors';

/** The environment variable naming the LLM endpoints a provider may call (comma-separated). */
export const LLM_ALLOWED_BASE_URLS_ENV = 'LLM_ALLOWED_BASE_URLS';

/** The address each SDK calls when no base URL is set. */
export const OFFICIAL_LLM_ENDPOINTS = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
} as const;

/** A URL as compared: scheme, host and port exactly, then the path without a trailing slash. */
function normalize(url: string, what: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new ParseAgentConfigError(
      `${what} '${url}' is not a valid URL. Write it in full, e.g. https://api.openai.com/v1.`,
    );
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ParseAgentConfigError(`${what} '${url}' must be an http(s) URL.`);
  }
  return parsed;
}

/** Parses the allowlist from options, else from LLM_ALLOWED_BASE_URLS; undefined when neither. */
export function allowlistFrom(
  option: readonly string[] | undefined,
  env: Record<string, string | undefined>,
): string[] | undefined {
  const raw = option ?? env[LLM_ALLOWED_BASE_URLS_ENV]?.split(',');
  const entries = raw?.map((entry) => entry.trim()).filter(Boolean);
  if (!entries) return undefined;
  if (!entries.length) {
    throw new ParseAgentConfigError(
      `allowedBaseUrls (${LLM_ALLOWED_BASE_URLS_ENV}) is set but empty, so no LLM endpoint could be called. List at least one base URL, or unset it.`,
    );
  }
  for (const entry of entries)
    normalize(entry, `An entry of allowedBaseUrls (${LLM_ALLOWED_BASE_URLS_ENV})`);
  return entries;
}

/**
 * True when `url` is an allowed base URL or lies under one: same scheme, host and port, and a path
 * equal to the entry's or below it at a '/' boundary (`/v1` allows `/v1/chat`, not `/v1evil`).
 */
export function isAllowedEndpoint(url: string, allowed: readonly string[]): boolean {
  const target = normalize(url, 'The LLM base URL');
  return allowed.some((entry) => {
    const base = normalize(entry, 'An allowed base URL');
    if (base.origin !== target.origin) return false;
    const basePath = trimSlashes(base.pathname);
    const targetPath = trimSlashes(target.pathname);
    return targetPath === basePath || targetPath.startsWith(`${basePath}/`);
  });
}

/** Throws, naming the URL and the setting, unless `url` is allowed. */
export function assertAllowedEndpoint(url: string, allowed: readonly string[]): void {
  if (isAllowedEndpoint(url, allowed)) return;
  throw new ParseAgentConfigError(
    `The LLM endpoint ${url} is not in the allowlist, so no request was sent to it. ` +
      `Add it to allowedBaseUrls (llm option) or ${LLM_ALLOWED_BASE_URLS_ENV} if it is yours; allowed now: ${allowed.join(', ')}.`,
  );
}

function trimSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}
