/**
 * The two object checks the library uses. `isPlainObject`: any non-null object that is not an
 * array (what a JSON value's object is; class instances pass). `isPlainRecord`: only objects made
 * as `{}` literals, by `JSON.parse` or with a null prototype, from this realm or another, so
 * Dates, class instances and arrays are never walked into as if they were fields.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  // Tag and prototype rather than prototype identity: structuredClone and vm contexts make plain
  // objects whose Object.prototype is another realm's (a prototype whose own prototype is null).
  if (Object.prototype.toString.call(value) !== '[object Object]') return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}
