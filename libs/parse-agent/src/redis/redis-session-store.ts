import { randomBytes } from 'node:crypto';
import { Subject } from 'rxjs';
import { StoreUnavailableError } from '../core/errors';
import {
  SessionLimitError,
  secondsUntilExpiry,
  type McpSession,
  type SessionCreateOptions,
  type SessionStore,
} from '../ports/session-store';
import type { RedisConnection, RedisStoreLogger } from './redis-connection';
import { liveSubscriptionsKey, SESSIONS_SLOT } from './redis-live-subscriptions';
import { RedisScript } from './redis-script';

/** Ids are 32 base64url characters, as the in-memory store issues them. */
const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;

export const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL = 100;

/**
 * Creates a session unless a cap is reached, atomically. Expired ids leave the user's index and the
 * global index (sorted sets scored by last use) first; then a full user index or a full global index
 * refuses: nothing is evicted. KEYS: session hash, user index, global index. ARGV: id, owner, user,
 * now, ttl ms, user cap, total cap, elicitation ('1' when the client declared it). Returns {'ok'} or {'user'|'server', last use of the oldest}.
 */
const CREATE = new RedisScript(`
local session, userIndex, allIndex = KEYS[1], KEYS[2], KEYS[3]
local id, owner, user = ARGV[1], ARGV[2], ARGV[3]
local now, ttl, userCap, totalCap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', userIndex, '-inf', now - ttl)
if redis.call('ZCARD', userIndex) >= userCap then
  return {'user', redis.call('ZRANGE', userIndex, 0, 0, 'WITHSCORES')[2]}
end
redis.call('ZREMRANGEBYSCORE', allIndex, '-inf', now - ttl)
if redis.call('ZCARD', allIndex) >= totalCap then
  return {'server', redis.call('ZRANGE', allIndex, 0, 0, 'WITHSCORES')[2]}
end
redis.call('HSET', session, 'owner', owner, 'user', user, 'createdAt', now, 'lastSeenAt', now, 'elicit', ARGV[8])
redis.call('PEXPIRE', session, ttl)
redis.call('ZADD', userIndex, now, id)
redis.call('PEXPIRE', userIndex, ttl)
redis.call('ZADD', allIndex, now, id)
redis.call('PEXPIRE', allIndex, ttl)
return {'ok'}
`);

/**
 * Reads a session for its owner and refreshes its idle clock (and its place in the indexes). A
 * session of another owner is reported as absent (and not refreshed). The session's resource
 * subscriptions (a set, when it has any) keep its expiry. KEYS: session hash, global index,
 * subscriptions set. ARGV: owner, now, ttl ms, user index prefix, id. Returns {createdAt, elicit flag}.
 */
const TOUCH = new RedisScript(`
local found = redis.call('HMGET', KEYS[1], 'owner', 'user', 'createdAt', 'elicit')
local owner, user, createdAt = found[1], found[2], found[3]
if not owner or owner ~= ARGV[1] then return false end
if not user then user = owner end
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'lastSeenAt', now)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
local index = ARGV[4] .. user
redis.call('ZADD', index, now, ARGV[5])
redis.call('PEXPIRE', index, ttl)
redis.call('ZADD', KEYS[2], now, ARGV[5])
redis.call('PEXPIRE', KEYS[2], ttl)
return {createdAt, found[4] or '0'}
`);

/**
 * Deletes a session, its resource subscriptions and its index entries; 1 when it existed. KEYS:
 * session, global index, subscriptions set. ARGV: user index prefix, id.
 */
const DELETE = new RedisScript(`
local found = redis.call('HMGET', KEYS[1], 'owner', 'user')
local owner, user = found[1], found[2]
if not owner then return 0 end
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('ZREM', ARGV[1] .. (user or owner), ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
`);

interface LocalSession extends McpSession {
  readonly end: Subject<void>;
  /** When this node last refreshed the session's expiry in Redis (TOUCH). */
  refreshedAt: number;
}

/**
 * A session this node refreshed less than this long ago (or a tenth of the idle timeout, if less)
 * is only read (one HGET of its owner) instead of refreshed: its Redis expiry and index scores lag
 * by at most this much, a second against an idle timeout of minutes.
 */
const REFRESH_EVERY_MS = 1000;

export interface RedisSessionStoreOptions {
  idleTimeoutMs: number;
  /** Open sessions per user, counted across all of that user's tokens and all nodes (default 100). */
  maxSessionsPerPrincipal?: number;
  /** Open sessions in total, all nodes together (default unlimited). */
  maxSessions?: number;
  logger?: RedisStoreLogger;
}

/**
 * Sessions shared by every node on one Redis: a session created on one node is valid on all, bound
 * to its owner, forgotten after `idleTimeoutMs` without use. At most `maxSessionsPerPrincipal` per
 * user and `maxSessions` in total: past either cap `create` refuses (SessionLimitError), it never
 * ends an open session to make room. Ending a session (DELETE) is published, so streams open on any
 * node close. `clear()` (this node shutting down) closes this node's streams only: the
 * sessions stay valid for the other nodes.
 *
 * With Redis unreachable or stalled, no session can be created or checked: `create` and `get`
 * throw StoreUnavailableError (the endpoint answers 503 with Retry-After), so a live session is
 * never declared gone because Redis was slow, and none is served without being checked.
 */
export class RedisSessionStore implements SessionStore {
  /** Sessions with local streams or recent local use; their `ended$` fire on a published end. */
  protected readonly local = new Map<string, LocalSession>();
  protected readonly endedChannel: string;
  protected readonly maxPerPrincipal: number;
  protected readonly maxSessions: number;
  protected unsubscribe?: () => void;
  protected sweeper?: NodeJS.Timeout;

  constructor(
    protected readonly redis: RedisConnection,
    protected readonly options: RedisSessionStoreOptions,
  ) {
    this.endedChannel = redis.key('sessions', 'ended');
    this.maxPerPrincipal = options.maxSessionsPerPrincipal ?? DEFAULT_MAX_SESSIONS_PER_PRINCIPAL;
    if (!Number.isInteger(this.maxPerPrincipal) || this.maxPerPrincipal < 1) {
      throw new RangeError('maxSessionsPerPrincipal must be a positive integer');
    }
    this.maxSessions = options.maxSessions ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isInteger(this.maxSessions) || this.maxSessions < 1) {
      throw new RangeError('maxSessions must be a positive integer');
    }
  }

  /** Subscribes to session ends and starts the idle sweep of local entries. */
  async start(): Promise<void> {
    this.unsubscribe = await this.redis.subscribe(this.endedChannel, (id) => this.endLocal(id));
    const every = Math.max(1000, Math.min(60_000, Math.floor(this.options.idleTimeoutMs / 2)));
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
  }

  async create(owner: string, options: SessionCreateOptions = {}): Promise<McpSession> {
    const user = options.user ?? owner;
    const id = randomBytes(24).toString('base64url');
    const now = Date.now();
    const ttl = this.options.idleTimeoutMs;
    let reply: [string, string?];
    try {
      reply = (await CREATE.run(
        this.redis.client,
        [this.sessionKey(id), this.indexKey(user), this.allKey()],
        [
          id,
          owner,
          user,
          now,
          ttl,
          this.maxPerPrincipal,
          this.maxSessions,
          options.elicitation ? '1' : '0',
        ],
      )) as [string, string?];
    } catch (error) {
      this.options.logger?.warn(
        `Redis session store unreachable (${(error as Error)?.message}); no session can be opened until it returns.`,
      );
      throw new StoreUnavailableError('MCP session store', 2);
    }
    if (reply[0] !== 'ok') {
      const scope = reply[0] === 'user' ? 'user' : 'server';
      const retryAfter = secondsUntilExpiry(Number(reply[1] ?? now), ttl, now);
      throw new SessionLimitError(
        scope,
        scope === 'user' ? this.maxPerPrincipal : this.maxSessions,
        retryAfter,
      );
    }
    return this.remember(id, owner, user, now, now, options.elicitation === true);
  }

  async get(id: string, owner: string): Promise<McpSession | undefined> {
    if (!SESSION_ID.test(id)) return undefined;
    const now = Date.now();
    const recent = this.local.get(id);
    if (recent && recent.owner === owner && now - recent.refreshedAt < this.refreshEveryMs) {
      return this.check(recent, now);
    }
    let found: unknown;
    try {
      found = await TOUCH.run(
        this.redis.client,
        [this.sessionKey(id), this.allKey(), liveSubscriptionsKey(this.redis, id)],
        [owner, now, this.options.idleTimeoutMs, this.indexKey(''), id],
      );
    } catch (error) {
      this.options.logger?.warn(
        `Redis session store unreachable (${(error as Error)?.message}); the session cannot be checked, answering 503.`,
      );
      throw new StoreUnavailableError('MCP session store', 1);
    }
    const [createdAt, elicit] = Array.isArray(found) ? (found as [string, string]) : [];
    if (createdAt === null || createdAt === undefined) {
      // Gone in Redis (expired or ended elsewhere): close what this node still holds.
      const held = this.local.get(id);
      if (held && held.owner === owner) this.endLocal(id);
      return undefined;
    }
    const held = this.local.get(id);
    if (held && held.owner === owner) {
      held.lastSeenAt = now;
      held.refreshedAt = now;
      return held;
    }
    return this.remember(id, owner, undefined, Number(createdAt), now, elicit === '1');
  }

  /**
   * A session this node refreshed a moment ago: only checks it still exists with its owner (it may
   * have been ended on another node), one command instead of the refresh script.
   */
  protected async check(held: LocalSession, now: number): Promise<McpSession | undefined> {
    let owner: string | null;
    try {
      owner = await this.redis.client.hget(this.sessionKey(held.id), 'owner');
    } catch (error) {
      this.options.logger?.warn(
        `Redis session store unreachable (${(error as Error)?.message}); the session cannot be checked, answering 503.`,
      );
      throw new StoreUnavailableError('MCP session store', 1);
    }
    if (owner !== held.owner) {
      // Gone in Redis (ended elsewhere): close what this node still holds.
      this.endLocal(held.id);
      return undefined;
    }
    held.lastSeenAt = now;
    return held;
  }

  protected get refreshEveryMs(): number {
    return Math.min(REFRESH_EVERY_MS, this.options.idleTimeoutMs / 10);
  }

  async delete(id: string): Promise<boolean> {
    if (!SESSION_ID.test(id)) return false;
    let removed: number;
    try {
      removed = (await DELETE.run(
        this.redis.client,
        [this.sessionKey(id), this.allKey(), liveSubscriptionsKey(this.redis, id)],
        [this.indexKey(''), id],
      )) as number;
    } catch {
      throw new StoreUnavailableError('MCP session store', 2);
    }
    await this.announceEnd(id);
    return removed === 1;
  }

  /** This node stops: its streams close; the sessions stay valid on the other nodes. */
  clear(): void {
    for (const id of [...this.local.keys()]) this.endLocal(id);
    this.unsubscribe?.();
    if (this.sweeper) clearInterval(this.sweeper);
  }

  /** Sessions this node holds (for tests and metrics). */
  get localSize(): number {
    return this.local.size;
  }

  protected remember(
    id: string,
    owner: string,
    user: string | undefined,
    createdAt: number,
    lastSeenAt: number,
    elicitation = false,
  ): McpSession {
    const end = new Subject<void>();
    const session: LocalSession = {
      id,
      owner,
      user,
      createdAt,
      lastSeenAt,
      refreshedAt: lastSeenAt,
      elicitation,
      end,
      ended$: end.asObservable(),
    };
    this.local.set(id, session);
    return session;
  }

  protected async announceEnd(id: string): Promise<void> {
    this.endLocal(id);
    await this.redis.publish(this.endedChannel, id);
  }

  protected endLocal(id: string): void {
    const session = this.local.get(id);
    if (!session) return;
    this.local.delete(id);
    session.end.next();
    session.end.complete();
  }

  /**
   * Drops local entries nobody listens to once idle here, and ends the streams of sessions that
   * expired in Redis (idle everywhere).
   */
  protected async sweep(): Promise<void> {
    const horizon = Date.now() - this.options.idleTimeoutMs;
    for (const session of [...this.local.values()]) {
      if (!session.end.observed) {
        if (session.lastSeenAt < horizon) this.local.delete(session.id);
        continue;
      }
      try {
        if ((await this.redis.client.exists(this.sessionKey(session.id))) === 0) {
          this.endLocal(session.id);
        }
      } catch {
        return; // Redis unreachable: keep the streams; the next sweep checks again.
      }
    }
  }

  // The scripts use a session with its user's index and the global index (and derive the user's
  // index from the session), so on a Redis Cluster all of them share one hash slot: the caps stay
  // exact. The per-call traffic of streams and rate windows spreads over the cluster.
  protected sessionKey(id: string): string {
    return this.redis.slotKey(SESSIONS_SLOT, 'session', id);
  }

  /** The sessions of one user (a sorted set of ids by last use). */
  protected indexKey(user: string): string {
    return this.redis.slotKey(SESSIONS_SLOT, 'sessions-of', user);
  }

  /** Every session (a sorted set of ids by last use), for the total cap. */
  protected allKey(): string {
    return this.redis.slotKey(SESSIONS_SLOT, 'sessions-all');
  }
}
