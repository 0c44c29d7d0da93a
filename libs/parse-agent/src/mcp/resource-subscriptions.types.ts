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

/** What `SharedSubscriptionRecords.add` did. */
export type SharedSubscriptionAdd = 'added' | 'exists' | 'full' | 'gone';

/**
 * Where a session's subscribed URIs are kept when several nodes serve its requests (Redis): any
 * node records and reads them, and a change is announced so the node holding the session's
 * listening stream starts or stops its LiveQuery subscriptions. Records live as long as the session
 * (its idle timeout) and go with it.
 */
export interface SharedSubscriptionRecords {
  /** Records `uri` unless the session already holds `cap` URIs ('full') or is gone ('gone'). */
  add(sessionId: string, uri: string, cap: number): Promise<SharedSubscriptionAdd>;
  /** False when the session had no record of `uri`. */
  remove(sessionId: string, uri: string): Promise<boolean>;
  list(sessionId: string): Promise<string[]>;
  /** Tells every node the session's records changed; false when the message could not be sent. */
  announce(sessionId: string): Promise<boolean>;
  /** Calls `changed` with the session id of each change another node announces; returns the stop. */
  watch(changed: (sessionId: string) => void): Promise<() => void>;
}
