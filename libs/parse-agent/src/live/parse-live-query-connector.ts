import { dirname } from 'node:path';
import { ParseAgentConfigError } from '../core/errors';
import type {
  LiveQueryConnection,
  LiveQueryConnectionEvents,
  LiveQueryConnector,
  LiveQueryCredentials,
  LiveQueryEvent,
  LiveQueryEventDetails,
  LiveQueryEventHandlers,
  LiveQuerySpec,
  LiveSubscriptionHandle,
} from './live-query-connector';

/** The parts of the `parse` SDK used here (parse/node: WebSocket through `ws`). */
interface EmitterLike {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}
interface SdkSubscription extends EmitterLike {
  id: number;
  subscribePromise: Promise<void>;
}
interface SdkLiveQueryClient extends EmitterLike {
  open(): void;
  close(): Promise<void>;
  subscribe(query: unknown, sessionToken?: string): SdkSubscription | undefined;
  unsubscribe(subscription: SdkSubscription): Promise<void>;
  connectPromise: Promise<void>;
  subscriptions: Map<number, SdkSubscription>;
  /** The SDK's pending reconnect (a timer), set while the socket is down. */
  reconnectHandle?: ReturnType<typeof setTimeout> | null;
}
interface SdkObject {
  toJSON(): Record<string, unknown>;
}
interface ParseSdk {
  LiveQueryClient: new (options: {
    applicationId: string;
    serverURL: string;
    javascriptKey?: string;
    masterKey?: string;
    sessionToken?: string;
  }) => SdkLiveQueryClient;
  Query: new (className: string) => { withJSON(json: Record<string, unknown>): unknown };
  CoreManager: {
    getEventEmitter(): unknown;
    setEventEmitter(emitter: unknown): void;
    getWebSocketController(): unknown;
    setWebSocketController(controller: unknown): void;
  };
}

export interface ParseLiveQueryConnectorOptions {
  /** ws:// or wss:// URL of the LiveQuery server. */
  serverURL: string;
  applicationId: string;
  javascriptKey?: string;
  masterKey: string;
}

const EVENTS: readonly LiveQueryEvent[] = ['create', 'update', 'delete', 'enter', 'leave'];

/**
 * Loads `parse/node` when LiveQuery is configured: an optional peer dependency. The SDK sets its
 * event emitter and WebSocket only in `Parse.initialize`, whose other settings are global and
 * belong to the application: only those two are filled in, and only when missing.
 */
export function loadParseSdk(): ParseSdk {
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const sdk = require('parse/node') as ParseSdk;
    const core = sdk.CoreManager;
    if (!core.getEventEmitter()) core.setEventEmitter(require('node:events').EventEmitter);
    if (!core.getWebSocketController()) core.setWebSocketController(webSocketOfSdk());
    /* eslint-enable @typescript-eslint/no-require-imports */
    return sdk;
  } catch (error) {
    if ((error as { code?: string })?.code !== 'MODULE_NOT_FOUND') throw error;
    throw new ParseAgentConfigError(
      "The liveQuery option needs the 'parse' package (its LiveQueryClient), which is not installed. Install it next to nestjs-parse-agent: npm install parse",
    );
  }
}

/** The `ws` package the SDK itself depends on (resolved from it), else Node's own WebSocket. */
function webSocketOfSdk(): unknown {
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const sdkDir = dirname(require.resolve('parse/node'));
    return require(require.resolve('ws', { paths: [sdkDir] }));
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch {
    return (globalThis as { WebSocket?: unknown }).WebSocket;
  }
}

/** The kind's details: an update's changed top-level fields and the row's ACL before and after. */
function detailsOf(
  kind: LiveQueryEvent,
  current: unknown,
  original: unknown,
): LiveQueryEventDetails {
  const a = (current as SdkObject | undefined)?.toJSON?.() ?? {};
  const hasOriginal = typeof (original as SdkObject | undefined)?.toJSON === 'function';
  const b = hasOriginal ? (original as SdkObject).toJSON() : undefined;
  const aclOf = (row: Record<string, unknown>) =>
    (row.ACL as Record<string, unknown> | undefined) ?? null;
  const details: LiveQueryEventDetails = { acl: aclOf(a) };
  if (b) details.originalAcl = aclOf(b);
  if (kind === 'update' && b) {
    const names = new Set([...Object.keys(a), ...Object.keys(b)]);
    details.changed = [...names].filter((n) => JSON.stringify(a[n]) !== JSON.stringify(b[n]));
  }
  return details;
}

/** LiveQuery through the `parse` SDK's LiveQueryClient: one client (one socket) per connection. */
export class ParseLiveQueryConnector implements LiveQueryConnector {
  protected readonly sdk: ParseSdk;

  constructor(protected readonly options: ParseLiveQueryConnectorOptions) {
    this.sdk = loadParseSdk();
  }

  open(credentials: LiveQueryCredentials, events: LiveQueryConnectionEvents): LiveQueryConnection {
    const { serverURL, applicationId, javascriptKey, masterKey } = this.options;
    const sessionToken = 'sessionToken' in credentials ? credentials.sessionToken : undefined;
    const client = new this.sdk.LiveQueryClient({
      applicationId,
      serverURL,
      javascriptKey,
      ...(sessionToken ? { sessionToken } : { masterKey }),
    });
    let wasDown = false;
    let closed = false;
    client.on('close', () => {
      if (closed) return;
      wasDown = true;
      events.down('socket closed');
    });
    client.on('error', (error) => {
      if (!closed) events.down(typeof error === 'string' ? error : 'socket error');
    });
    client.on('open', () => {
      if (wasDown && !closed) events.restored();
      wasDown = false;
    });
    client.open();
    const sdk = this.sdk;
    const ready = client.connectPromise;
    // A refusal settles `ready`; nobody awaiting it must not become an unhandled rejection.
    ready.catch(() => undefined);
    return {
      ready,
      subscribe(spec: LiveQuerySpec, handlers: LiveQueryEventHandlers): LiveSubscriptionHandle {
        const query = new sdk.Query(spec.className);
        query.withJSON({ where: spec.where });
        const subscription = client.subscribe(query, sessionToken);
        if (!subscription) throw new Error('LiveQuery subscribe returned nothing');
        for (const kind of EVENTS) {
          subscription.on(kind, (object: unknown, original: unknown) =>
            handlers.event(kind, detailsOf(kind, object, original)),
          );
        }
        subscription.on('error', (error) => handlers.error(String(error)));
        let refused = false;
        const subscribed = subscription.subscribePromise;
        subscribed.catch(() => {
          refused = true;
        });
        return {
          ready: subscribed,
          close: async () => {
            // A refused subscription is not on the server: nothing to unsubscribe, and the client
            // must not send it again when it reconnects.
            if (refused) client.subscriptions.delete(subscription.id);
            else await client.unsubscribe(subscription).catch(() => undefined);
          },
        };
      },
      async close() {
        closed = true;
        // The SDK's close() leaves a pending reconnect armed: closed while the socket was down,
        // the client would open a new socket a moment later and keep it (one socket the
        // LiveQuery server holds for nobody). Disarm it before and after closing.
        const disarm = () => {
          if (client.reconnectHandle) clearTimeout(client.reconnectHandle);
          client.reconnectHandle = null;
        };
        disarm();
        await client.close().catch(() => undefined);
        disarm();
      },
    };
  }
}
