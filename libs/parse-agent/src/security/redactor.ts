import { isPlainObject } from './field-names';
import { isInternalField } from './internal-fields';

const CLASS_ID_STRING = /^([A-Za-z_][A-Za-z0-9_]*)\$(.+)$/;

/**
 * Scrubs a response for an agent: objects (pointers, included rows) of classes it may not see become
 * `{ className, __redacted: true }`, "Class$id" strings naming such classes are replaced the same way
 * whatever key holds them, ACL maps are dropped, and internal fields vanish at every depth.
 */
export function redact(value: unknown, isDenied: (className: string) => boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => redact(v, isDenied));
  if (typeof value === 'string') {
    if (value.indexOf('$') === -1) return value; // fast path: most strings name no class
    const m = CLASS_ID_STRING.exec(value);
    if (m && isDenied(m[1])) return { className: m[1], __redacted: true };
    return value;
  }
  // Driver rows (direct MongoDB path) carry Date instances: values, not objects to walk.
  if (!isPlainObject(value) || value instanceof Date) return value;
  if (typeof value.className === 'string' && isDenied(value.className)) {
    return { className: value.className, __redacted: true };
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (key === 'ACL' || isInternalField(key)) continue;
    const v = value[key];
    out[key] =
      v !== null && typeof v === 'object'
        ? redact(v, isDenied)
        : typeof v === 'string'
          ? redact(v, isDenied)
          : v;
  }
  return out;
}
