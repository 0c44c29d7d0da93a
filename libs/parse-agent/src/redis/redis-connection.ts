import { randomBytes } from 'node:crypto';
import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { ParseAgentConfigError } from '../core/errors';
import { printClassAs } from '../core/secret-display';

/** A command connection: one Redis server, or a Redis Cluster (ioredis' cluster client). */
export type RedisClient = Redis | Cluster;

/** A Redis Cluster startup node: `redis://[user:password@]host:port` (or rediss://), or host and port. */
export type RedisClusterNode = string | { host: string; port: number };

/** The `redis` option of `ParseAgentModule.forRoot`: one of `url`, `cluster` or `client`. */
export interface RedisConnectionOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://...` (TLS). */
  url?: string;
  /**
   * Startup nodes of a Redis Cluster (some or all masters; the rest are discovered). Credentials and
   * TLS (rediss://) given in the URLs apply to every node. Keys that a script uses together carry
   * one hash tag, so each script stays in one slot.
   */
  cluster?: RedisClusterNode[];
  /**
   * An ioredis client the application owns (it is not closed by the module): a `Redis`, or a
   * `Cluster` for a Redis Cluster.
   */
  client?: RedisClient;
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
  protected subscriber?: RedisClient;
  protected readonly handlers = new Map<string, Set<ChannelHandler>>();
  protected watchdog?: NodeJS.Timeout;
  protected readonly probing = new Set<RedisClient>();

  /** True on a Redis Cluster: keys that scripts use together share a hash tag. */
  readonly cluster: boolean;

  constructor(
    readonly client: RedisClient,
    readonly keyPrefix: string,
    /** True when this object created the client and so must close it. */
    protected readonly ownsClient: boolean,
  ) {
    this.cluster = (client as { isCluster?: boolean }).isCluster === true;
  }

  /** Builds the connection from validated options, loading ioredis only now. */
  static fromOptions(options: RedisConnectionOptions): RedisConnection {
    const resolved = validateRedisOptions(options);
    const prefix = resolved.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    if (resolved.client) return new RedisConnection(resolved.client, prefix, false);
    const ioredis = loadIoRedis();
    if (resolved.cluster) {
      const { nodes, redisOptions } = clusterNodes(resolved.cluster);
      const cluster = new ioredis.Cluster(nodes, clusterFailFastOptions(redisOptions));
      cluster.on('error', () => undefined);
      // No watchdog: the cluster client drops a node that stops answering and refreshes its slots.
      return new RedisConnection(cluster, prefix, true);
    }
    const client = new ioredis.Redis(resolved.url!, failFastOptions());
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

  protected probe(connection: RedisClient, timeoutMs: number): void {
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

  /**
   * A key that scripts use together with the other keys of `group`. On a Redis Cluster the group
   * is a hash tag (`<prefix>{<group>}:<parts>`), so all of them sit in one slot; on one server the
   * key is `key(...parts)`, the shape it always had.
   */
  slotKey(group: string, ...parts: string[]): string {
    return this.cluster ? `${this.keyPrefix}{${group}}:${parts.join(':')}` : this.key(...parts);
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

  protected ensureSubscriber(): RedisClient {
    if (this.subscriber) return this.subscriber;
    // A duplicate keeps the options of the client, including an application's own client.
    // Subscriptions wait for the connection (and are renewed after each reconnect) instead of failing.
    // On a cluster, plain pub/sub reaches every node: the duplicate subscribes through one of them
    // and moves to another when that one is lost.
    const subscriber: RedisClient = isCluster(this.client)
      ? this.client.duplicate([], {
          enableOfflineQueue: true,
          redisOptions: {
            ...this.client.options.redisOptions,
            maxRetriesPerRequest: null,
            commandTimeout: undefined,
          },
        })
      : this.client.duplicate({
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

// Holds the Redis client, whose options hold the URL and password.
printClassAs(RedisConnection, (connection) => ({
  keyPrefix: connection.keyPrefix,
  cluster: connection.cluster,
  nodeId: connection.nodeId,
}));

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

/**
 * The cluster client fails as fast as the single one: commands are refused while the cluster is not
 * reachable, each node's commands time out after 2 s, and a node that went away is retried through
 * a slot refresh (`retryDelayOnFailover`) a few times only.
 */
function clusterFailFastOptions(redisOptions: ClusterOptions['redisOptions']): ClusterOptions {
  return {
    enableOfflineQueue: false,
    clusterRetryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: 6,
    slotsRefreshTimeout: 1000,
    redisOptions: {
      maxRetriesPerRequest: 1,
      commandTimeout: 2000,
      connectTimeout: 2000,
      ...redisOptions,
    },
  };
}

/** Startup nodes as ioredis takes them; a password (and TLS) given in a URL applies to all nodes. */
function clusterNodes(nodes: RedisClusterNode[]): {
  nodes: ClusterNode[];
  redisOptions: ClusterOptions['redisOptions'];
} {
  const redisOptions: NonNullable<ClusterOptions['redisOptions']> = {};
  const parsed = nodes.map((node) => {
    if (typeof node !== 'string') return { host: node.host, port: node.port };
    const url = new URL(node);
    if (url.password && redisOptions.password === undefined) {
      if (url.username) redisOptions.username = decodeURIComponent(url.username);
      redisOptions.password = decodeURIComponent(url.password);
    }
    if (url.protocol === 'rediss:') redisOptions.tls = {};
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) };
  });
  return { nodes: parsed, redisOptions };
}

function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

async function quietly(client: RedisClient): Promise<void> {
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
      'must be an object: { url: "redis://127.0.0.1:6379" }, { cluster: ["redis://host:7000", ...] } or { client: new Redis(...) }.',
    );
  }
  const { url, client, cluster, keyPrefix } = options as Record<string, unknown>;
  if ([url, client, cluster].filter((value) => value !== undefined).length !== 1) {
    fail(
      'needs exactly one of url ("redis://host:6379"), cluster (["redis://host:7000", ...], a Redis Cluster\'s startup nodes) or client (an ioredis Redis or Cluster).',
    );
  }
  if (cluster !== undefined) validateClusterNodes(cluster, fail);
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
      fail(
        'client must be an ioredis client (new Redis(...) or new Cluster([...]) from the ioredis package).',
      );
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

function validateClusterNodes(cluster: unknown, fail: (problem: string) => never): void {
  const example = 'use ["redis://10.0.0.1:7000", "redis://10.0.0.2:7000"] or [{ host, port }]';
  if (!Array.isArray(cluster) || cluster.length === 0) {
    fail(`cluster must be a non-empty array of startup nodes; ${example}.`);
  }
  const schemes = new Set<string>();
  for (const node of cluster as unknown[]) {
    if (typeof node === 'string') {
      let parsed: URL | undefined;
      try {
        parsed = new URL(node);
      } catch {
        fail(`cluster node ${JSON.stringify(node)} is not a URL; ${example}.`);
      }
      if (!['redis:', 'rediss:'].includes(parsed!.protocol) || !parsed!.hostname) {
        fail(
          `cluster node ${JSON.stringify(node)} must be redis://host:port or rediss://host:port.`,
        );
      }
      if (parsed!.pathname && parsed!.pathname !== '/') {
        fail(
          `cluster node ${JSON.stringify(node)} names a database; a Redis Cluster has only database 0, drop the /db part.`,
        );
      }
      schemes.add(parsed!.protocol);
      continue;
    }
    const { host, port } = (node ?? {}) as { host?: unknown; port?: unknown };
    if (
      typeof host !== 'string' ||
      !host ||
      !Number.isInteger(port) ||
      (port as number) < 1 ||
      (port as number) > 65535
    ) {
      fail(`cluster node ${JSON.stringify(node)} is not a startup node; ${example}.`);
    }
  }
  if (schemes.size > 1) fail('cluster nodes mix redis:// and rediss://; use one scheme for all.');
}

interface IoRedisModule {
  Redis: new (url: string, options: RedisOptions) => Redis;
  Cluster: new (nodes: ClusterNode[], options: ClusterOptions) => Cluster;
}

function loadIoRedis(): IoRedisModule {
  try {
    // Optional peer dependency: loaded only when the redis option is used.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require('ioredis') as IoRedisModule['Redis'] &
      Partial<IoRedisModule> & { default?: IoRedisModule['Redis'] & Partial<IoRedisModule> };
    const Redis = loaded.Redis ?? loaded.default ?? loaded;
    const Cluster =
      loaded.Cluster ?? loaded.default?.Cluster ?? (Redis as Partial<IoRedisModule>).Cluster!;
    return { Redis, Cluster };
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
