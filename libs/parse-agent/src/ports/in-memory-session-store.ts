import { randomBytes } from 'node:crypto';
import { Subject } from 'rxjs';
import type { McpSession, SessionStore } from './session-store';

interface SessionEntry extends McpSession {
  readonly end: Subject<void>;
}

/** Ids are 32 base64url characters: unguessable, visible ASCII, and valid correlation ids. */
const SESSION_ID = /^[A-Za-z0-9_-]{32}$/;

/**
 * In-process session table with idle expiry, a per-owner cap (an owner over it loses its own oldest
 * session, so one caller cannot evict everyone else's) and a global size cap (oldest evicted
 * first). Sessions do not span processes: scaled-out deployments use a shared SessionStore or run
 * with `sessions: false`.
 */
export class InMemorySessionStore implements SessionStore {
  protected readonly sessions = new Map<string, SessionEntry>();
  protected readonly perOwner = new Map<string, number>();
  protected readonly maxPerOwner: number;

  constructor(
    protected readonly idleTimeoutMs: number,
    protected readonly maxSessions: number,
    protected readonly now: () => number = () => Date.now(),
    options: { maxPerOwner?: number } = {},
  ) {
    this.maxPerOwner = options.maxPerOwner ?? Number.POSITIVE_INFINITY;
  }

  /** Open sessions of one owner. */
  countFor(owner: string): number {
    return this.perOwner.get(owner) ?? 0;
  }

  get size(): number {
    return this.sessions.size;
  }

  create(owner: string): McpSession {
    this.sweep();
    if (this.countFor(owner) >= this.maxPerOwner) {
      // Least recently used first: the owner's first entry is its stalest session.
      for (const session of this.sessions.values()) {
        if (session.owner !== owner) continue;
        this.delete(session.id);
        if (this.countFor(owner) < this.maxPerOwner) break;
      }
    }
    while (this.sessions.size >= this.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.delete(oldest);
    }
    const end = new Subject<void>();
    const at = this.now();
    const session: SessionEntry = {
      id: randomBytes(24).toString('base64url'),
      owner,
      createdAt: at,
      lastSeenAt: at,
      end,
      ended$: end.asObservable(),
    };
    this.sessions.set(session.id, session);
    this.perOwner.set(owner, this.countFor(owner) + 1);
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
    return session;
  }

  delete(id: string): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    this.sessions.delete(id);
    const left = this.countFor(session.owner) - 1;
    if (left > 0) this.perOwner.set(session.owner, left);
    else this.perOwner.delete(session.owner);
    session.end.next();
    session.end.complete();
    return true;
  }

  /** Ends every session (application shutdown). */
  clear(): void {
    for (const id of [...this.sessions.keys()]) this.delete(id);
  }

  protected expired(session: McpSession): boolean {
    return this.now() - session.lastSeenAt > this.idleTimeoutMs;
  }

  protected sweep(): void {
    for (const session of [...this.sessions.values()]) {
      if (!this.expired(session)) break; // least recently used first: the rest are fresher
      this.delete(session.id);
    }
  }
}
