/**
 * Waits between tries of a subscription's plan that failed for a passing reason (Parse Server slow
 * or unavailable): 1 s doubling to 30 s, then every 30 s (the last wait repeats) for as long as the
 * session's listening stream stays open.
 */
export const PLAN_RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  1000, 2000, 4000, 8000, 16_000, 30_000,
]);

/** How often a node re-reads the shared records of the streams it holds (a lost announcement). */
export const RESYNC_INTERVAL_MS = 60_000;

/** Internal timing of live subscriptions: the defaults above; tests shorten them. */
export interface LiveSubscriptionTiming {
  planRetryDelaysMs: readonly number[];
  resyncIntervalMs: number;
}

export const LIVE_SUBSCRIPTION_TIMING: LiveSubscriptionTiming = Object.freeze({
  planRetryDelaysMs: PLAN_RETRY_DELAYS_MS,
  resyncIntervalMs: RESYNC_INTERVAL_MS,
});

/** What one failed try led to. */
export interface PlanRetryStep {
  /** Failed tries so far (1 on the first failure). */
  attempt: number;
  /** The wait before the next try; undefined when a try is due already. */
  delay?: number;
  /** This failure ended the doubling: from now on the plan is tried at the longest wait. */
  rampOver: boolean;
  /** Past the doubling (this failure or an earlier one ended it). */
  steady: boolean;
}

interface PendingRetry {
  attempt: number;
  timer?: NodeJS.Timeout;
  rampOver?: boolean;
}

/**
 * The plan retries of one listening stream, per URI. They stop with the stream (`clear`), on a
 * policy refusal or an unsubscribe (`stop`), or once the plan passes (`stop`); never by count.
 */
export class PlanRetries {
  protected readonly pending = new Map<string, PendingRetry>();

  constructor(protected readonly delays: readonly number[] = PLAN_RETRY_DELAYS_MS) {}

  /** Counts a failed try of `uri` and schedules `retry` unless a try is due already. */
  failed(uri: string, retry: () => void): PlanRetryStep {
    const entry = this.pending.get(uri) ?? { attempt: 0 };
    this.pending.set(uri, entry);
    entry.attempt += 1;
    const rampOver = entry.attempt > this.delays.length && !entry.rampOver;
    if (rampOver) entry.rampOver = true;
    const steady = entry.attempt > this.delays.length;
    if (entry.timer) return { attempt: entry.attempt, rampOver, steady };
    const delay = this.delays[Math.min(entry.attempt, this.delays.length) - 1];
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (this.pending.get(uri) === entry) retry();
    }, delay);
    entry.timer.unref();
    return { attempt: entry.attempt, delay, rampOver, steady };
  }

  has(uri: string): boolean {
    return this.pending.has(uri);
  }

  /** Ends the retries of `uri`; true if its plan had failed before. */
  stop(uri: string): boolean {
    const entry = this.pending.get(uri);
    if (!entry) return false;
    clearTimeout(entry.timer);
    this.pending.delete(uri);
    return true;
  }

  clear(): void {
    for (const entry of this.pending.values()) clearTimeout(entry.timer);
    this.pending.clear();
  }
}
