/**
 * The innermost code or message along an error's `cause` chain, starting at `start` (ECONNREFUSED,
 * ENOTFOUND, "other side closed", ...): what a person needs from a failed fetch, past Node's
 * generic "fetch failed". Undefined when the chain names nothing.
 */
export function innermostCause(start: unknown): string | undefined {
  let current = start;
  let found: string | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') found = code;
    else if (typeof message === 'string' && message !== 'fetch failed') found = message;
    current = (current as { cause?: unknown }).cause;
  }
  return found;
}
