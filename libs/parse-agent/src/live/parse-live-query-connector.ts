import { ParseAgentConfigError } from '../core/errors';
import type {
  LiveQueryConnection,
  LiveQueryConnectionEvents,
  LiveQueryConnector,
  LiveQueryCredentials,
  LiveQueryEvent,
  LiveQueryEventHandlers,
  LiveQuerySpec,
  LiveSubscriptionHandle,
} from './live-query-connector';

/** The parts of the `parse` SDK used here (parse/node: WebSocket through `ws`). */
interface EmitterLike {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}
interface SdkSubscription extends EmitterLike {
  subscribePromise: Promise<void>;
}
interface SdkLiveQueryClient extends EmitterLike {
  open(): void;
  close(): Promise<void>;
  subscribe(query: unknown, sessionToken?: string): SdkSubscription | undefined;
  unsubscribe(subscription: SdkSubscription): Promise<void>;
  connectPromise: Promise<void>;
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
}

export interface ParseLiveQueryConnectorOptions {
  /** ws:// or wss:// URL of the LiveQuery server. */
  serverURL: string;
  applicationId: string;
  javascriptKey?: string;
  masterKey: string;
}

const EVENTS: readonly LiveQueryEvent[] = ['create', 'update', 'delete', 'enter', 'leave'];

/** Loads `parse/node` when LiveQuery is configured: an optional peer dependency. */
export function loadParseSdk(): ParseSdk {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('parse/node') as ParseSdk;
  } catch (error) {
    if ((error as { code?: string })?.code !== 'MODULE_NOT_FOUND') throw error;
    throw new ParseAgentConfigError(
      "The liveQuery option needs the 'parse' package (its LiveQueryClient), which is not installed. Install it next to nestjs-parse-agent: npm install parse",
    );
  }
}

/** Top-level fields whose values differ between two rows (an update's changed fields). */
function changedFields(current: unknown, original: unknown): string[] {
  const a = (current as SdkObject | undefined)?.toJSON?.() ?? {};
  const b = (original as SdkObject | undefined)?.toJSON?.() ?? {};
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((name) => JSON.stringify(a[name]) !== JSON.stringify(b[name]));
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
            handlers.event(kind, kind === 'update' ? changedFields(object, original) : undefined),
          );
        }
        subscription.on('error', (error) => handlers.error(String(error)));
        const subscribed = subscription.subscribePromise;
        subscribed.catch(() => undefined);
        return {
          ready: subscribed,
          close: () => client.unsubscribe(subscription).catch(() => undefined),
        };
      },
      async close() {
        closed = true;
        await client.close().catch(() => undefined);
      },
    };
  }
}
