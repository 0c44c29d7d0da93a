import { randomBytes } from 'node:crypto';
import { Subject } from 'rxjs';
import {
  SessionLimitError,
  secondsUntilExpiry,
  type McpSession,
  type SessionCreateOptions,
  type SessionStore,
} from './session-store';

interface SessionEntry extends McpSession {
  readonly user: string;
  readonly end: Subject<void>;
}

/** Ids are 32 base64url characters: unguessable, visible ASCII, and valid correlation ids. */
const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;

export interface InMemorySessionStoreOptions {
  /** Open sessions per user, counted across all of that user's tokens (default unlimited). */
  maxPerUser?: number;
  /** @deprecated the same as `maxPerUser` (sessions are counted per user, not per token). */
  maxPerOwner?: number;
}

/** How often idle sessions are looked for: half the idle time, within these bounds (ms). */
const SWEEP_MIN_MS = 1000;
const SWEEP_MAX_MS = 60_000;

/**
 * In-process session table with idle expiry, a per-user cap and a total cap. A full cap refuses the
 * newcomer (SessionLimitError); no open session is ever ended to make room, so one user opening
 * sessions through many tokens cannot push anyone out. Sessions do not span processes: scaled-out
 * deployments use a shared SessionStore or run with `sessions: false`.
 *
 * An idle session ends on a timer too, not only when it is next looked up: what hangs on its
 * `ended$` (an open stream, resource subscriptions on LiveQuery) is released even if its client
 * never comes back.
 */
export class InMemorySessionStore implements SessionStore {
  /** Every session, least recently used first. */
  protected readonly sessions = new Map<string, SessionEntry>();
  /** Each user's sessions, least recently used first. */
  protected readonly byUser = new Map<string, Map<string, SessionEntry>>();
  protected readonly maxPerUser: number;
  protected sweeper?: NodeJS.Timeout;

  constructor(
    protected readonly idleTimeoutMs: number,
    protected readonly maxSessions: number,
    protected readonly now: () => number = () => Date.now(),
    options: InMemorySessionStoreOptions = {},
  ) {
    this.maxPerUser = options.maxPerUser ?? options.maxPerOwner ?? Number.POSITIVE_INFINITY;
  }

  /** Open sessions of one user. */
  countFor(user: string): number {
    return this.byUser.get(user)?.size ?? 0;
  }

  get size(): number {
    return this.sessions.size;
  }

  create(owner: string, options: SessionCreateOptions = {}): McpSession {
    const user = options.user ?? owner;
    this.sweep();
    const mine = this.byUser.get(user);
    if (mine && mine.size >= this.maxPerUser) {
      throw new SessionLimitError('user', this.maxPerUser, this.retryAfter(mine));
    }
    if (this.sessions.size >= this.maxSessions) {
      throw new SessionLimitError('server', this.maxSessions, this.retryAfter(this.sessions));
    }
    const end = new Subject<void>();
    const at = this.now();
    const session: SessionEntry = {
      id: randomBytes(24).toString('base64url'),
      owner,
      user,
      createdAt: at,
      lastSeenAt: at,
      elicitation: options.elicitation === true,
      end,
      ended$: end.asObservable(),
    };
    this.sessions.set(session.id, session);
    if (mine) mine.set(session.id, session);
    else this.byUser.set(user, new Map([[session.id, session]]));
    this.startSweeping();
    return session;
  }

  /** The live session with this id owned by `owner` (refreshing its idle clock), else undefined. */
  get(id: string, owner: string): McpSession | undefined {
    if (!SESSION_ID.test(id)) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    if (this.expired(session)) {
      this.delete(id);
      return undefined;
    }
    if (session.owner !== owner) return undefined;
    session.lastSeenAt = this.now();
    // Re-insert so iteration order stays least-recently-used first.
    this.sessions.delete(id);
    this.sessions.set(id, session);
    const mine = this.byUser.get(session.user);
    mine?.delete(id);
    mine?.set(id, session);
    return session;
  }

  delete(id: string): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    this.sessions.delete(id);
    const mine = this.byUser.get(session.user);
    mine?.delete(id);
    if (mine && mine.size === 0) this.byUser.delete(session.user);
    session.end.next();
    session.end.complete();
    return true;
  }

  /** Ends every session (application shutdown). */
  clear(): void {
    for (const id of [...this.sessions.keys()]) this.delete(id);
    this.stopSweeping();
  }

  protected expired(session: McpSession): boolean {
    return this.now() - session.lastSeenAt > this.idleTimeoutMs;
  }

  protected sweep(): void {
    // Deleting the entry being visited is safe while iterating a Map.
    for (const session of this.sessions.values()) {
      if (!this.expired(session)) break; // least recently used first: the rest are fresher
      this.delete(session.id);
    }
    if (!this.sessions.size) this.stopSweeping();
  }

  /** Sweeps while there are sessions; the timer never keeps the process alive. */
  protected startSweeping(): void {
    if (this.sweeper || !Number.isFinite(this.idleTimeoutMs)) return;
    const every = Math.max(
      SWEEP_MIN_MS,
      Math.min(SWEEP_MAX_MS, Math.floor(this.idleTimeoutMs / 2)),
    );
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  protected stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Seconds until the least recently used session of a table expires. */
  protected retryAfter(table: Map<string, SessionEntry>): number {
    const oldest = table.values().next().value;
    return oldest ? secondsUntilExpiry(oldest.lastSeenAt, this.idleTimeoutMs, this.now()) : 1;
  }
}
