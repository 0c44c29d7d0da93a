import { createHash } from 'node:crypto';

/**
 * Node's hook for `util.inspect`, and so for `console.log`, loggers' `%o`/`%O` and the REPL (the
 * registered symbol `util.inspect.custom` is, so core needs no `node:util`).
 */
export const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/** `util.inspect` as Node hands it to a custom inspector. */
type Inspect = (value: unknown, options?: object) => string;

/**
 * The first 8 hex characters of SHA-256 of a secret: enough to tell two tokens apart in a log or
 * a describe(), nothing an attacker can use.
 */
export function secretFingerprint(secret: string): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 8);
}

/**
 * A key for a secret where the key must not collide (a rate-limit bucket): 128 bits of SHA-256,
 * base64url. Never reversible to the secret.
 */
export function secretDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url').slice(0, 22);
}

/** How a secret shows wherever it would otherwise be printed: `sha256:1a2b3c4d`. */
export function shownSecret(secret: string | undefined): string | undefined {
  return secret === undefined ? undefined : `sha256:${secretFingerprint(secret)}`;
}

/** The printed form of a library object: its name, then a view of it that holds no secret. */
export function inspectAs(
  name: string,
  view: Record<string, unknown>,
  options: object | undefined,
  inspect: Inspect | undefined,
): string {
  const body = inspect ? inspect(withoutUndefined(view), options) : JSON.stringify(view);
  return `${name} ${body}`;
}

/**
 * Makes an object print as `view()` instead of itself: `util.inspect`, `console.log`, `%o` and
 * `JSON.stringify` all show the view. Both hooks are non-enumerable, so spreads, `Object.keys`
 * and deep equality do not see them (a spread copy is the caller's, and prints in full).
 */
export function printAs<T extends object>(
  target: T,
  name: string,
  view: () => Record<string, unknown>,
): T {
  Object.defineProperties(target, {
    [INSPECT]: {
      value: (_depth: number, options: object, inspect: Inspect) =>
        inspectAs(name, view(), options, inspect),
      enumerable: false,
      configurable: true,
    },
    toJSON: { value: () => withoutUndefined(view()), enumerable: false, configurable: true },
  });
  return target;
}

function withoutUndefined(view: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(view)) if (value !== undefined) out[key] = value;
  return out;
}

/**
 * Makes every instance of a class print as `view(instance)`: for library classes that hold the
 * module's options, a client or a cache keyed by tokens, where a default print would walk into
 * the master key, an operator key or a live session token.
 */
export function printClassAs<T extends object>(
  cls: abstract new (...args: never[]) => T,
  view: (instance: T) => Record<string, unknown> = () => ({}),
): void {
  Object.defineProperties(cls.prototype, {
    [INSPECT]: {
      value(this: T, _depth: number, options: object, inspect: Inspect) {
        return inspectAs(this.constructor.name, view(this), options, inspect);
      },
      enumerable: false,
      configurable: true,
      writable: true,
    },
    toJSON: {
      value(this: T) {
        return withoutUndefined(view(this));
      },
      enumerable: false,
      configurable: true,
      writable: true,
    },
  });
}
