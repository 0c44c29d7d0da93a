import { hash } from 'node:crypto';
import type {
  LiveQueryConnection,
  LiveQueryConnector,
  LiveQueryCredentials,
} from './live-query-connector';

/** Where the pool reports a connection going down or coming back (a log line, updates). */
export interface LiveQueryPoolEvents {
  down(identity: string, reason: string): void;
  restored(identity: string): void;
}

interface PooledConnection {
  connection: LiveQueryConnection;
  users: number;
}

/** A promise that gives up after `ms` (a socket that never answers must not hold a caller). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * One LiveQuery connection per identity (a session token's digest, or the master key), shared by
 * every subscription of that identity on this node and closed when its last one ends.
 */
export class LiveQueryPool {
  protected readonly connections = new Map<string, PooledConnection>();

  constructor(
    protected readonly connector: LiveQueryConnector,
    protected readonly events: LiveQueryPoolEvents,
    protected readonly closeTimeoutMs = 2000,
  ) {}

  /** The pool's key for credentials: never the token itself. */
  static identityOf(credentials: LiveQueryCredentials): string {
    return 'sessionToken' in credentials
      ? `session:${hash('sha256', credentials.sessionToken, 'base64url')}`
      : 'master';
  }

  /** The identity's connection, opened on first use; call `release` once per `acquire`. */
  acquire(credentials: LiveQueryCredentials): {
    identity: string;
    connection: LiveQueryConnection;
  } {
    const identity = LiveQueryPool.identityOf(credentials);
    let pooled = this.connections.get(identity);
    if (!pooled) {
      const connection = this.connector.open(credentials, {
        down: (reason) => this.events.down(identity, reason),
        restored: () => this.events.restored(identity),
      });
      pooled = { connection, users: 0 };
      this.connections.set(identity, pooled);
    }
    pooled.users += 1;
    return { identity, connection: pooled.connection };
  }

  release(identity: string): Promise<void> {
    const pooled = this.connections.get(identity);
    if (!pooled) return Promise.resolve();
    pooled.users -= 1;
    if (pooled.users > 0) return Promise.resolve();
    this.connections.delete(identity);
    return within(pooled.connection.close(), this.closeTimeoutMs, 'LiveQuery close').catch(
      () => undefined,
    );
  }

  /** Open connections (one per identity with subscriptions on this node). */
  get size(): number {
    return this.connections.size;
  }

  async closeAll(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(
      all.map((p) =>
        within(p.connection.close(), this.closeTimeoutMs, 'LiveQuery close').catch(() => undefined),
      ),
    );
  }
}
