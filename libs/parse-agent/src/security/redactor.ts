import { isPlainObject } from '../query/field-names';
import { isInternalField } from '../query/internal-fields';

const CLASS_ID_STRING = /^([A-Za-z_][A-Za-z0-9_]*)\$(.+)$/;

export interface RedactOptions {
  /** Allowlist of a class (wire names), or undefined when the class has none. */
  allowlistFor?: (className: string) => ReadonlySet<string> | undefined;
  /** Class of the top-level rows, whose allowlist applies to them. */
  rootClass?: string;
  /**
   * Display form for typed values (`__type` other than 'Object') and driver Dates, applied in the
   * same walk so rows are copied once; with it, joined rows also lose their `__type` tag.
   */
  simplifyTyped?: (value: Record<string, unknown>) => unknown;
}

/**
 * Scrubs a response for an agent in one pass: objects (pointers, included rows) of classes it may
 * not see become `{ className, __redacted: true }`, "Class$id" strings naming such classes are
 * replaced the same way whatever key holds them, ACL maps are dropped, internal fields vanish at
 * every depth, and (with `allowlistFor`) top-level rows of `rootClass` and joined rows
 * (`__type: 'Object'`) keep only their class's allowlisted fields. Nested plain JSON is data: no
 * allowlist applies inside it.
 */
export function redact(
  value: unknown,
  isDenied: (className: string) => boolean,
  options: RedactOptions = {},
): unknown {
  return scrub(value, { isDenied, ...options }, options.rootClass);
}

interface Walk {
  isDenied: (className: string) => boolean;
  allowlistFor?: RedactOptions['allowlistFor'];
  simplifyTyped?: RedactOptions['simplifyTyped'];
}

function scrubString(value: string, isDenied: (className: string) => boolean): unknown {
  if (value.indexOf('$') === -1) return value; // fast path: most strings name no class
  const m = CLASS_ID_STRING.exec(value);
  if (m && isDenied(m[1])) return { className: m[1], __redacted: true };
  return value;
}

function scrub(value: unknown, walk: Walk, rowClass: string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => scrub(v, walk, rowClass));
  if (typeof value === 'string') return scrubString(value, walk.isDenied);
  if (value instanceof Date) {
    if (!walk.simplifyTyped) return value;
    return Number.isNaN(value.getTime()) ? null : value.toISOString();
  }
  // Driver rows (direct MongoDB path) carry Date instances: values, not objects to walk.
  if (!isPlainObject(value)) return value;
  if (typeof value.className === 'string' && walk.isDenied(value.className)) {
    return { className: value.className, __redacted: true };
  }
  const joined = value.__type === 'Object';
  if (walk.simplifyTyped && typeof value.__type === 'string' && !joined) {
    return walk.simplifyTyped(value);
  }
  const own = joined && typeof value.className === 'string' ? value.className : rowClass;
  const allowed = own && walk.allowlistFor ? walk.allowlistFor(own) : undefined;
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (isInternalField(key)) continue;
    if (key === '__type' && joined && walk.simplifyTyped) continue;
    if (allowed && !allowed.has(key) && key !== '__type' && key !== 'className') continue;
    const v = value[key];
    out[key] =
      v !== null && typeof v === 'object'
        ? scrub(v, walk, undefined)
        : typeof v === 'string'
          ? scrubString(v, walk.isDenied)
          : v;
  }
  return out;
}
