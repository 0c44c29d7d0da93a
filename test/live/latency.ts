/**
 * Issue 34's claim, "notified within 1 s", measured from the moment the REST write was answered
 * (the row exists) to the notification: the time the write itself takes on a loaded machine is not
 * the live path's. LIVE_LATENCY_BUDGET_MS widens the bound where even that cannot be kept (a
 * shared CI runner); the default is the claim, 1000 ms. The measured time is printed either way.
 */
export const LIVE_LATENCY_BUDGET_MS = Number(process.env.LIVE_LATENCY_BUDGET_MS) || 1000;

/** Runs `write`, then asserts `heard()` turns true within the budget after the write's answer. */
export async function notifiedAfterWrite<T>(
  what: string,
  write: () => Promise<T>,
  heard: () => boolean,
): Promise<T> {
  const result = await write();
  const answered = Date.now();
  // Waits past the budget, so a slow delivery fails with its measured time, not a timeout.
  const deadline = answered + LIVE_LATENCY_BUDGET_MS + 5000;
  while (!heard() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const ms = Date.now() - answered;
  console.log(
    `${what}: notified ${ms} ms after the write was answered (budget ${LIVE_LATENCY_BUDGET_MS} ms, LIVE_LATENCY_BUDGET_MS)`,
  );
  expect(heard()).toBe(true);
  expect(ms).toBeLessThanOrEqual(LIVE_LATENCY_BUDGET_MS);
  return result;
}
