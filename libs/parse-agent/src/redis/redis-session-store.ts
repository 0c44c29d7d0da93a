import { randomBytes } from 'node:crypto';
import { Subject } from 'rxjs';
import { StoreUnavailableError } from '../core/errors';
import type { McpSession, SessionStore } from '../ports/session-store';
import type { RedisConnection, RedisStoreLogger } from './redis-connection';
import { RedisScript } from './redis-script';

/** Ids are 32 base64url characters, as the in-memory store issues them. */
const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;

export const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL = 100;

/**
 * Creates a session and enforces the per-principal cap atomically: the owner's index (a sorted set by
 * last use) drops ids whose session expired, then the least recently used are evicted past the cap.
 * KEYS: session hash, owner index. ARGV: id, owner, now, ttl ms, cap, session key prefix.
 * Returns the evicted ids (their streams are ended by the caller).
 */
const CREATE = new RedisScript(`
local session, index = KEYS[1], KEYS[2]
local id, owner, now, ttl, cap, prefix = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
redis.call('ZREMRANGEBYSCORE', index, '-inf', now - ttl)
local evicted = {}
local count = redis.call('ZCARD', index)
if count >= cap then
  local old = redis.call('ZRANGE', index, 0, count - cap)
  for _, oldId in ipairs(old) do
    redis.call('DEL', prefix .. oldId)
    redis.call('ZREM', index, oldId)
    table.insert(evicted, oldId)
  end
end
redis.call('HSET', session, 'owner', owner, 'createdAt', now, 'lastSeenAt', now)
redis.call('PEXPIRE', session, ttl)
redis.call('ZADD', index, now, id)
redis.call('PEXPIRE', index, ttl)
return evicted
`);

/**
 * Reads a session for its owner and refreshes its idle clock. A session of another owner is
 * reported as absent (and not refreshed). KEYS: session hash. ARGV: owner, now, ttl ms, index prefix.
 */
const TOUCH = new RedisScript(`
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner or owner ~= ARGV[1] then return false end
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local createdAt = redis.call('HGET', KEYS[1], 'createdAt')
redis.call('HSET', KEYS[1], 'lastSeenAt', now)
redis.call('PEXPIRE', KEYS[1], ttl)
local index = ARGV[4] .. owner
redis.call('ZADD', index, now, ARGV[5])
redis.call('PEXPIRE', index, ttl)
return createdAt
`);

/** Deletes a session and its index entry; 1 when it existed. KEYS: session. ARGV: index prefix, id. */
const DELETE = new RedisScript(`
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', ARGV[1] .. owner, ARGV[2])
return 1
`);

interface LocalSession extends McpSession {
  readonly end: Subject<void>;
}

export interface RedisSessionStoreOptions {
  idleTimeoutMs: number;
  maxSessionsPerPrincipal?: number;
  logger?: RedisStoreLogger;
}

/**
 * Sessions shared by every node on one Redis: a session created on one node is valid on all, bound
 * to its owner, forgotten after `idleTimeoutMs` without use, at most `maxSessionsPerPrincipal` per
 * owner (least recently used evicted). Ending a session (DELETE, eviction) is published, so streams
 * open on any node close. `clear()` (this node shutting down) closes this node's streams only: the
 * sessions stay valid for the other nodes.
 *
 * With Redis unreachable, no session can be created or found: requests naming one get 404 and the
 * client starts over, rather than being served by a session nobody can check.
 */
export class RedisSessionStore implements SessionStore {
  /** Sessions with local streams or recent local use; their `ended$` fire on a published end. */
  protected readonly local = new Map<string, LocalSession>();
  protected readonly endedChannel: string;
  protected readonly maxPerPrincipal: number;
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
  }

  /** Subscribes to session ends and starts the idle sweep of local entries. */
  async start(): Promise<void> {
    this.unsubscribe = await this.redis.subscribe(this.endedChannel, (id) => this.endLocal(id));
    const every = Math.max(1000, Math.min(60_000, Math.floor(this.options.idleTimeoutMs / 2)));
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
  }

  async create(owner: string): Promise<McpSession> {
    const id = randomBytes(24).toString('base64url');
    const now = Date.now();
    let evicted: string[];
    try {
      evicted = (await CREATE.run(
        this.redis.client,
        [this.sessionKey(id), this.indexKey(owner)],
        [id, owner, now, this.options.idleTimeoutMs, this.maxPerPrincipal, this.sessionKey('')],
      )) as string[];
    } catch (error) {
      this.options.logger?.warn(
        `Redis session store unreachable (${(error as Error)?.message}); no session can be opened until it returns.`,
      );
      throw new StoreUnavailableError('MCP session store', 2);
    }
    for (const old of evicted) await this.announceEnd(old);
    return this.remember(id, owner, now, now);
  }

  async get(id: string, owner: string): Promise<McpSession | undefined> {
    if (!SESSION_ID.test(id)) return undefined;
    const now = Date.now();
    let createdAt: unknown;
    try {
      createdAt = await TOUCH.run(
        this.redis.client,
        [this.sessionKey(id)],
        [owner, now, this.options.idleTimeoutMs, this.indexKey(''), id],
      );
    } catch (error) {
      this.options.logger?.warn(
        `Redis session store unreachable (${(error as Error)?.message}); the session cannot be checked, answering "Session not found".`,
      );
      return undefined;
    }
    if (createdAt === null || createdAt === undefined) {
      // Gone in Redis (expired or ended elsewhere): close what this node still holds.
      const held = this.local.get(id);
      if (held && held.owner === owner) this.endLocal(id);
      return undefined;
    }
    const held = this.local.get(id);
    if (held && held.owner === owner) {
      held.lastSeenAt = now;
      return held;
    }
    return this.remember(id, owner, Number(createdAt), now);
  }

  async delete(id: string): Promise<boolean> {
    if (!SESSION_ID.test(id)) return false;
    let removed: number;
    try {
      removed = (await DELETE.run(
        this.redis.client,
        [this.sessionKey(id)],
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

  protected remember(id: string, owner: string, createdAt: number, lastSeenAt: number): McpSession {
    const end = new Subject<void>();
    const session: LocalSession = {
      id,
      owner,
      createdAt,
      lastSeenAt,
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

  protected sessionKey(id: string): string {
    return this.redis.key('session', id);
  }

  protected indexKey(owner: string): string {
    return this.redis.key('sessions-of', owner);
  }
}
