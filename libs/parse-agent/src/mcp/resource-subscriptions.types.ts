import type { ParseAgent } from '../agent/parse-agent';
import type { JsonRpcNotification, SubscribingSession } from './mcp-dispatcher.types';
import type { ParsedResourceUri } from './resource-uri';

export type { SubscribingSession } from './mcp-dispatcher.types';

/**
 * What the dispatcher and the transports need of resource subscriptions (the `liveQuery` option
 * provides it): subscribe and unsubscribe for a session, and the session's listening stream, which
 * receives `notifications/resources/updated` while it is open.
 */
export interface ResourceSubscriptionService {
  /** LiveQuery is configured and answered: `initialize` advertises `resources.subscribe`. */
  readonly available: boolean;
  /**
   * Checks the agent's whole read policy for the resource and records the subscription (idempotent
   * per session and URI). Refusals throw before any LiveQuery socket opens.
   */
  subscribe(
    agent: ParseAgent,
    session: SubscribingSession,
    resource: ParsedResourceUri,
    signal?: AbortSignal,
  ): Promise<void>;
  /** Ends one subscription; false when the session had none for this URI. */
  unsubscribe(session: SubscribingSession, uri: string): Promise<boolean>;
  /**
   * A listening stream of the session opened on this node, for `agent`: its subscriptions run
   * here until the returned function is called (the stream closed).
   */
  listen(
    session: SubscribingSession,
    agent: ParseAgent,
    deliver: (notification: JsonRpcNotification) => void,
  ): () => void;
}
