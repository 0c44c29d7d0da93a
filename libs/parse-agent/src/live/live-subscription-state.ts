import type { Subscription } from 'rxjs';
import type { ParseAgent } from '../agent/parse-agent';
import type { JsonRpcNotification } from '../mcp/mcp-dispatcher.types';
import type { SubscribingSession } from '../mcp/resource-subscriptions.types';
import type { ParsedResourceUri } from '../mcp/resource-uri';
import type { LiveSubscriptionHandle } from './live-query-connector';
import type { PlanRetries } from './plan-retries';
import type { LivePlan } from './subscription-plan';

/*
 * What LiveResourceSubscriptions keeps per session on this node: the session's recorded URIs and,
 * while its listening stream is open here, what runs on LiveQuery for it.
 */

export interface SubscriptionRecord {
  resource: ParsedResourceUri;
  /** Planned for the agent that subscribed; a stream opened by another agent plans again. */
  plan?: LivePlan;
}

export interface ActiveSubscription {
  handle: LiveSubscriptionHandle;
  identity: string;
  timer?: NodeJS.Timeout;
}

export interface Listener {
  agent: ParseAgent;
  deliver(notification: JsonRpcNotification): void;
  active: Map<string, ActiveSubscription>;
  /** Subscriptions whose plan failed for a reason other than policy: retried with backoff. */
  retries: PlanRetries;
  /** Shared records this node is too full to run, the client told once. */
  skipped: Set<string>;
}

/** `reattach`: a new stream, every resource re-read; `changed`: announced; `resync`: periodic. */
export type ReloadMode = 'reattach' | 'changed' | 'resync';

export interface SessionState {
  session: SubscribingSession;
  records: Map<string, SubscriptionRecord>;
  ended: Subscription;
  listener?: Listener;
  /** Shared records: the reload from the store in progress (reloads run one after another). */
  reloading?: Promise<void>;
  /** The session ended; set before the state is forgotten, so a late caller sees it. */
  over?: boolean;
}
