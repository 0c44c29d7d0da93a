/**
 * Rows a built-in data path hands to its reader to keep: arrays nothing else holds (parsed from
 * Parse's answer, built from a driver's result). The reader empties such an array once it has
 * redacted the rows into new objects.
 *
 * Why: the array reaches the reader through promises and async frames created before the round
 * trip. Under load those are already in V8's old generation when the answer comes, and an old
 * object that points at young rows keeps them alive through every young collection until the next
 * full one, even after the call has finished, so each call's raw rows get copied and promoted.
 * Emptying the array cuts that link at once (`npm run bench:profile` shows the promoted bytes).
 *
 * A custom `DataPath` may return an array it keeps (a cache): arrays not marked here are never
 * touched.
 */
const handedOver = new WeakSet<object>();

/** Marks `rows` as owned by whoever receives them. */
export function handOverRows<T extends unknown[]>(rows: T): T {
  handedOver.add(rows);
  return rows;
}

/** Empties `rows` if a built-in path handed them over; anything else is left as it is. */
export function releaseHandedOverRows(rows: unknown): void {
  if (Array.isArray(rows) && handedOver.delete(rows)) rows.length = 0;
}
