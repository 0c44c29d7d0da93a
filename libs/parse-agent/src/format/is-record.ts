/**
 * True for plain JSON-style objects (`{}` literals, `JSON.parse` output, null-prototype maps).
 * Arrays, Dates and class instances are excluded so the formatters never walk into them by accident.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  // A prototype whose own prototype is null is an Object.prototype, from this realm or another
  // (structuredClone and vm contexts create objects with another realm's prototype).
  return proto === null || (Object.getPrototypeOf(proto) === null && !Array.isArray(value));
}
