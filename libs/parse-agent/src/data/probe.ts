/** What the start-up check's probes share: the outcome, a time limit, and redaction. */

/**
 * The result of one probe. `setting` names the option to fix; `transient` marks a server that
 * cannot be reached (yet) or answers 5xx, as opposed to one that answered and refused.
 */
export type ProbeOutcome =
  { ok: true } | { ok: false; setting: string; message: string; transient: boolean };

/** The outcome of a probe that passed. */
export const PROBE_OK: ProbeOutcome = Object.freeze({ ok: true });

/** A URL as it may be logged: scheme, host, port and path; never user, password or query. */
export function redactedEndpoint(uri: string): string {
  try {
    const url = new URL(uri);
    const path = url.pathname.replace(/\/+$/, '');
    return `${url.protocol}//${url.host}${path}`;
  } catch {
    return '(an unparsable URL)';
  }
}

/** Removes the password of `uri` wherever a driver's message might quote it. */
export function scrub(message: string, uri: string | undefined): string {
  if (!uri) return message;
  let password: string;
  try {
    password = decodeURIComponent(new URL(uri).password);
  } catch {
    return message;
  }
  return password ? message.split(password).join('***') : message;
}

export function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export const isTimeout = (error: unknown) =>
  (error as { name?: unknown })?.name === 'TimeoutError' ||
  (error as { name?: unknown })?.name === 'StartupProbeTimeout';

/** Runs `work` with a time limit; the signal aborts what it started. */
export async function withTimeout<T>(
  timeoutMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`no answer within ${timeoutMs} ms`);
      error.name = 'StartupProbeTimeout';
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([work(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}
