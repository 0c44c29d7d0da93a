import { randomBytes } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';
import { ParseAgentConfigError } from '../core/errors';

/** The `redis` option of `ParseAgentModule.forRoot`: one of `url` or `client`. */
export interface RedisConnectionOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://...` (TLS). */
  url?: string;
  /** An ioredis client the application owns (it is not closed by the module). */
  client?: Redis;
  /**
   * Prefix of every key and channel (default `parse-agent:`). Give deployments that share one Redis
   * different prefixes; nodes of one deployment must use the same.
   */
  keyPrefix?: string;
}

export const DEFAULT_REDIS_KEY_PREFIX = 'parse-agent:';

type ChannelHandler = (message: string) => void;

/** Logger shape the Redis stores report through (Nest's Logger fits). */
export interface RedisStoreLogger {
  warn(message: string): void;
}

/**
 * One Redis deployment as the stores see it: a command connection, a lazily opened subscriber
 * connection (Redis needs a dedicated one for pub/sub), the key prefix and this node's id.
 */
export class RedisConnection {
  /** Distinguishes this process in pub/sub messages, so it can skip its own echoes. */
  readonly nodeId = randomBytes(9).toString('base64url');
  protected subscriber?: Redis;
  protected readonly handlers = new Map<string, Set<ChannelHandler>>();
  protected watchdog?: NodeJS.Timeout;
  protected readonly probing = new Set<Redis>();

  constructor(
    readonly client: Redis,
    readonly keyPrefix: string,
    /** True when this object created the client and so must close it. */
    protected readonly ownsClient: boolean,
  ) {}

  /** Builds the connection from validated options, loading ioredis only now. */
  static fromOptions(options: RedisConnectionOptions): RedisConnection {
    const resolved = validateRedisOptions(options);
    const prefix = resolved.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    if (resolved.client) return new RedisConnection(resolved.client, prefix, false);
    const IORedis = loadIoRedis();
    const client = new IORedis(resolved.url!, failFastOptions());
    // Connection errors surface as refused calls with clear messages; the event must have a listener
    // or Node treats it as an uncaught error.
    client.on('error', () => undefined);
    const connection = new RedisConnection(client, prefix, true);
    connection.watch();
    return connection;
  }

  /**
   * Pings the connections this object owns every `everyMs`; one that does not answer within
   * `timeoutMs` is dropped and reopened. After a network partition the old TCP connection would
   * only come back on the kernel's next retransmission (seconds, growing with the partition's
   * length); a fresh connection is usable as soon as the network is.
   */
  watch(everyMs = 1000, timeoutMs = 1000): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => {
      if (this.ownsClient) this.probe(this.client, timeoutMs);
      if (this.subscriber) this.probe(this.subscriber, timeoutMs);
    }, everyMs);
    this.watchdog.unref?.();
  }

  protected probe(connection: Redis, timeoutMs: number): void {
    if (connection.status !== 'ready' || this.probing.has(connection)) return;
    this.probing.add(connection);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(resolve, timeoutMs, 'timeout');
    });
    void Promise.race([connection.ping().catch(() => 'failed'), timedOut]).then((outcome) => {
      clearTimeout(timer);
      this.probing.delete(connection);
      if (outcome === 'timeout' && connection.status === 'ready') connection.disconnect(true);
    });
  }

  /** Resolves when the command connection is ready, or after `timeoutMs` (Redis may be down). */
  async waitReady(timeoutMs = 2000): Promise<boolean> {
    if (this.ready) return true;
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ready);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(this.ready), timeoutMs);
      this.client.on('ready', onReady);
    });
  }

  key(...parts: string[]): string {
    return `${this.keyPrefix}${parts.join(':')}`;
  }

  /** True when the command connection can run commands now. */
  get ready(): boolean {
    return this.client.status === 'ready';
  }

  /** Calls `handler` for every message on `channel` (a prefixed name); returns the unsubscription. */
  async subscribe(channel: string, handler: ChannelHandler): Promise<() => void> {
    const subscriber = this.ensureSubscriber();
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      // ioredis queues this until connected and re-subscribes after every reconnect; boot waits
      // for it a little only, so a Redis that is down delays no one for long.
      const subscribed = subscriber.subscribe(channel).catch(() => undefined);
      await Promise.race([subscribed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    }
    set.add(handler);
    return () => {
      set!.delete(handler);
      // Per-stream channels come and go: leave the channel once nobody here listens.
      if (set!.size === 0 && this.handlers.get(channel) === set) {
        this.handlers.delete(channel);
        void this.subscriber?.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  /** Publishes; false when Redis could not take it (the caller decides whether that matters). */
  async publish(channel: string, message: string): Promise<number | false> {
    try {
      return await this.client.publish(channel, message);
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = undefined;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    this.handlers.clear();
    if (subscriber) await quietly(subscriber);
    if (this.ownsClient) await quietly(this.client);
  }

  protected ensureSubscriber(): Redis {
    if (this.subscriber) return this.subscriber;
    // A duplicate keeps the options of the client, including an application's own client.
    // Subscriptions wait for the connection (and are renewed after each reconnect) instead of failing.
    const subscriber = this.client.duplicate({
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      commandTimeout: undefined,
    });
    subscriber.on('error', () => undefined);
    subscriber.on('message', (channel: string, message: string) => {
      for (const handler of this.handlers.get(channel) ?? []) {
        try {
          handler(message);
        } catch {
          // One broken handler must not stop the others.
        }
      }
    });
    this.subscriber = subscriber;
    return subscriber;
  }
}

/**
 * Commands fail at once while Redis is unreachable instead of queueing: the stores turn the failure
 * into a clear refusal (fail closed) and the client keeps reconnecting in the background.
 */
function failFastOptions(): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 2000,
    connectTimeout: 2000,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
  };
}

async function quietly(client: Redis): Promise<void> {
  try {
    if (client.status === 'ready') await client.quit();
    else client.disconnect();
  } catch {
    client.disconnect();
  }
}

/** Checks the option's shape; errors name the setting to fix. */
export function validateRedisOptions(options: unknown): RedisConnectionOptions {
  const fail = (problem: string): never => {
    throw new ParseAgentConfigError(`ParseAgentModule.forRoot: redis ${problem}`);
  };
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    return fail(
      'must be an object: { url: "redis://127.0.0.1:6379" } or { client: new Redis(...) }.',
    );
  }
  const { url, client, keyPrefix } = options as Record<string, unknown>;
  if ((url === undefined) === (client === undefined)) {
    fail('needs exactly one of url ("redis://host:6379") or client (an ioredis instance).');
  }
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(String(url));
    } catch {
      fail(`url ${JSON.stringify(url)} is not a URL; use redis://host:6379 or rediss://host:6380.`);
    }
    if (typeof url !== 'string' || !['redis:', 'rediss:'].includes(parsed!.protocol)) {
      fail(`url must start with redis:// or rediss:// (got ${JSON.stringify(url)}).`);
    }
  }
  if (client !== undefined) {
    const c = client as Record<string, unknown>;
    const methods = ['duplicate', 'publish', 'eval', 'evalsha'];
    if (typeof c !== 'object' || methods.some((m) => typeof c[m] !== 'function')) {
      fail('client must be an ioredis client (new Redis(...) from the ioredis package).');
    }
  }
  if (
    keyPrefix !== undefined &&
    (typeof keyPrefix !== 'string' || !/^[A-Za-z0-9:._{}-]{1,64}$/.test(keyPrefix))
  ) {
    fail('keyPrefix must be 1-64 characters of letters, digits and : . _ - { }.');
  }
  return options as RedisConnectionOptions;
}

type IoRedisConstructor = new (url: string, options: RedisOptions) => Redis;

function loadIoRedis(): IoRedisConstructor {
  try {
    // Optional peer dependency: loaded only when the redis option is used.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require('ioredis') as { default?: IoRedisConstructor } & IoRedisConstructor;
    return loaded.default ?? loaded;
  } catch (error) {
    const missing =
      (error as { code?: string })?.code === 'MODULE_NOT_FOUND' &&
      String((error as Error).message).includes("'ioredis'");
    if (!missing) throw error;
    throw new ParseAgentConfigError(
      "ParseAgentModule.forRoot: the redis option needs the 'ioredis' package, which is not installed. Install it next to nestjs-parse-agent: npm install ioredis",
    );
  }
}
