import type { LiveQueryEvent, LiveQueryEventDetails } from './live-query-connector';
import { updatedNotification } from './live-subscription-helpers';
import type { ActiveSubscription, Listener, SessionState } from './live-subscription-state';
import type { LivePlan } from './subscription-plan';

/** One running subscription, as its LiveQuery events see it. */
export interface RunningSubscription {
  listener: Listener;
  uri: string;
  plan: LivePlan;
  active: ActiveSubscription;
}

/** One matching change: debounced per (session, URI) into one update on the stream. */
export function debounceEvent(
  { listener, uri, plan, active }: RunningSubscription,
  kind: LiveQueryEvent,
  details: LiveQueryEventDetails,
  debounceMs: number,
): void {
  if (kind === 'update') {
    if (plan.ignoreUpdates) return;
    const watched = plan.fields;
    const relevant = (details.changed ?? []).filter((f) => f !== 'updatedAt');
    if (!relevant.length) return;
    if (watched && !relevant.some((f) => watched.includes(f))) return;
  }
  if (active.timer || listener.active.get(uri) !== active) return;
  active.timer = setTimeout(() => {
    active.timer = undefined;
    if (listener.active.get(uri) !== active) return;
    listener.deliver(updatedNotification(uri));
  }, debounceMs);
}

/**
 * A connection is back after an outage: changes may have been missed, so every resource running
 * on it is re-read. Returns how many were.
 */
export function tellRestored(sessions: Iterable<SessionState>, identity: string): number {
  let resent = 0;
  for (const state of sessions) {
    const listener = state.listener;
    if (!listener) continue;
    for (const [uri, active] of listener.active) {
      if (active.identity !== identity) continue;
      resent += 1;
      listener.deliver(updatedNotification(uri));
    }
  }
  return resent;
}

/** A recorded subscription is idle on the open stream here: neither running nor retried. */
export function idleHere(state: SessionState, uri: string): boolean {
  const listener = state.listener;
  return !!listener && !listener.active.has(uri) && !listener.retries.has(uri);
}
