import { ParseAgentConfigError } from '../core/errors';
import { LIVE_SUBSCRIPTION_TIMING, type LiveSubscriptionTiming } from './plan-retries';

/** The `liveQuery` option of `forRoot`: resource subscriptions backed by Parse LiveQuery. */
export interface LiveQueryOptions {
  /**
   * The LiveQuery server, `ws://` or `wss://`. Default: `parse.serverURL` with its scheme turned
   * into ws(s) (Parse's LiveQuery server on the same HTTP server as Parse Server).
   */
  serverURL?: string;
  /**
   * The classes Parse Server's own `liveQuery.classNames` lists (LiveQuery never reports others):
   * a subscription to any other class is refused instead of never firing.
   */
  classNames: string[];
  /** Bursts of changes to one subscribed resource collapse into one update per window (ms, default 100). */
  debounceMs?: number;
  /** Subscriptions one MCP session may hold (default 100). */
  maxSubscriptionsPerSession?: number;
  /** Subscriptions this node holds for all sessions together (default 10 000). */
  maxSubscriptions?: number;
  /** How long connecting or subscribing may take before it fails (ms, default 5000). */
  timeoutMs?: number;
}

export interface ResolvedLiveQueryOptions {
  serverURL: string;
  classNames: ReadonlySet<string>;
  debounceMs: number;
  maxSubscriptionsPerSession: number;
  maxSubscriptions: number;
  timeoutMs: number;
  /** Plan retry waits and the shared-records re-read interval (internal). */
  timing: LiveSubscriptionTiming;
}

/**
 * Not part of the public option: the library's own tests shorten the retry waits with it so the
 * real schedule runs in seconds. Applications leave it out.
 */
export interface InternalLiveQueryOptions extends LiveQueryOptions {
  timing?: Partial<LiveSubscriptionTiming>;
}

export const LIVE_QUERY_DEFAULTS = Object.freeze({
  debounceMs: 100,
  maxSubscriptionsPerSession: 100,
  maxSubscriptions: 10_000,
  timeoutMs: 5000,
});

function positiveInteger(value: unknown, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ParseAgentConfigError(
      `ParseAgentModule.forRoot: liveQuery.${name} must be an integer of at least ${min} (got ${String(value)}).`,
    );
  }
  return value;
}

/** Checks the option and fills the defaults; errors name the setting and how to fix it. */
export function resolveLiveQueryOptions(
  option: LiveQueryOptions,
  parseServerURL: string,
): ResolvedLiveQueryOptions {
  if (typeof option !== 'object' || option === null) {
    throw new ParseAgentConfigError(
      "ParseAgentModule.forRoot: liveQuery must be an object, e.g. { classNames: ['Order'] }.",
    );
  }
  const names = option.classNames;
  if (
    !Array.isArray(names) ||
    names.length === 0 ||
    !names.every((n) => typeof n === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(n))
  ) {
    throw new ParseAgentConfigError(
      "ParseAgentModule.forRoot: liveQuery.classNames must list the class names Parse Server's liveQuery.classNames lists, e.g. ['Order'].",
    );
  }
  const serverURL = option.serverURL ?? parseServerURL.replace(/^http(s?):\/\//i, 'ws$1://');
  if (!/^wss?:\/\/[^/]+/i.test(serverURL)) {
    throw new ParseAgentConfigError(
      `ParseAgentModule.forRoot: liveQuery.serverURL must be a ws:// or wss:// URL (got ${serverURL}).`,
    );
  }
  return {
    serverURL,
    classNames: new Set(names),
    debounceMs: positiveInteger(option.debounceMs, 'debounceMs', LIVE_QUERY_DEFAULTS.debounceMs, 0),
    maxSubscriptionsPerSession: positiveInteger(
      option.maxSubscriptionsPerSession,
      'maxSubscriptionsPerSession',
      LIVE_QUERY_DEFAULTS.maxSubscriptionsPerSession,
    ),
    maxSubscriptions: positiveInteger(
      option.maxSubscriptions,
      'maxSubscriptions',
      LIVE_QUERY_DEFAULTS.maxSubscriptions,
    ),
    timeoutMs: positiveInteger(option.timeoutMs, 'timeoutMs', LIVE_QUERY_DEFAULTS.timeoutMs),
    timing: timingOf((option as InternalLiveQueryOptions).timing),
  };
}

/** The internal `timing`, checked: a bad value must not become a busy loop against Parse or Redis. */
function timingOf(timing: Partial<LiveSubscriptionTiming> | undefined): LiveSubscriptionTiming {
  const delays = timing?.planRetryDelaysMs ?? LIVE_SUBSCRIPTION_TIMING.planRetryDelaysMs;
  if (
    !Array.isArray(delays) ||
    !delays.length ||
    !delays.every((d) => Number.isInteger(d) && d >= 10)
  ) {
    throw new ParseAgentConfigError(
      'ParseAgentModule.forRoot: liveQuery.timing.planRetryDelaysMs must be a non-empty list of integers of at least 10 (internal; leave it out).',
    );
  }
  return {
    planRetryDelaysMs: Object.freeze([...delays]),
    resyncIntervalMs: positiveInteger(
      timing?.resyncIntervalMs,
      'timing.resyncIntervalMs',
      LIVE_SUBSCRIPTION_TIMING.resyncIntervalMs,
      100,
    ),
  };
}
