/**
 * The LiveQuery client side, as the subscriptions use it: a connection per identity, each holding
 * subscriptions. The `parse` SDK's LiveQueryClient implements it (parse-live-query-connector.ts);
 * the interface keeps the rest of the feature independent of the SDK.
 */

/** How a connection authenticates: a user's session token, or the master key. */
export type LiveQueryCredentials = { sessionToken: string } | { masterKey: true };

/** The LiveQuery events a subscription reports. */
export type LiveQueryEvent = 'create' | 'update' | 'delete' | 'enter' | 'leave';

/** One subscription's query as LiveQuery takes it (Parse REST constraints). */
export interface LiveQuerySpec {
  className: string;
  where: Record<string, unknown>;
}

/** What an event says of the row, beyond its kind (never shown to clients). */
export interface LiveQueryEventDetails {
  /** The top-level fields an update changed. */
  changed?: readonly string[];
  /** The row's ACL after the change and before it (`null`: public; undefined: not known). */
  acl?: Record<string, unknown> | null;
  originalAcl?: Record<string, unknown> | null;
}

export interface LiveQueryEventHandlers {
  /** A matching row changed. */
  event(kind: LiveQueryEvent, details: LiveQueryEventDetails): void;
  /** The server refused or dropped the subscription. */
  error(message: string): void;
}

export interface LiveSubscriptionHandle {
  /** Resolves once the server confirmed the subscription; rejects with its refusal. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export interface LiveQueryConnectionEvents {
  /** The socket closed unexpectedly; the client reconnects by itself. */
  down(reason: string): void;
  /** The socket is open again and every subscription was sent again. */
  restored(): void;
}

export interface LiveQueryConnection {
  /** Resolves once the server accepted the connection; rejects with its refusal. */
  readonly ready: Promise<void>;
  subscribe(spec: LiveQuerySpec, handlers: LiveQueryEventHandlers): LiveSubscriptionHandle;
  close(): Promise<void>;
}

export interface LiveQueryConnector {
  open(credentials: LiveQueryCredentials, events: LiveQueryConnectionEvents): LiveQueryConnection;
}
