/**
 * True for plain JSON-style objects (`{}` literals, `JSON.parse` output, null-prototype maps).
 * Arrays, Dates and class instances are excluded so the formatters never walk into them by accident.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
