import { InMemorySessionStore } from './in-memory-session-store';
import { SessionLimitError } from './session-store';

function refusal(fn: () => unknown): SessionLimitError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SessionLimitError) return error;
    throw error;
  }
  throw new Error('expected a SessionLimitError');
}

describe('InMemorySessionStore', () => {
  it('issues unguessable ids bound to their owner', () => {
    const registry = new InMemorySessionStore(60_000, 100);
    const a = registry.create('owner-a');
    const b = registry.create('owner-a');
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(a.id).not.toBe(b.id);
    expect(registry.get(a.id, 'owner-a')).toBe(a);
    expect(registry.get(a.id, 'owner-b')).toBeUndefined();
    expect(registry.get('not an id', 'owner-a')).toBeUndefined();
  });

  it('binds a session to the token that opened it, not to its user', () => {
    const store = new InMemorySessionStore(60_000, 100, undefined, { maxPerUser: 5 });
    const s = store.create('token-1', { user: 'alice' });
    expect(s.user).toBe('alice');
    expect(store.get(s.id, 'token-1')).toBe(s);
    expect(store.get(s.id, 'token-2')).toBeUndefined(); // alice's other token
    expect(store.get(s.id, 'alice')).toBeUndefined();
  });

  it('ends a session on delete (its ended$ fires) and forgets it', () => {
    const registry = new InMemorySessionStore(60_000, 100);
    const session = registry.create('o');
    let ended = false;
    session.ended$.subscribe({ complete: () => (ended = true) });
    expect(registry.delete(session.id)).toBe(true);
    expect(ended).toBe(true);
    expect(registry.get(session.id, 'o')).toBeUndefined();
    expect(registry.delete(session.id)).toBe(false);
  });

  it('expires idle sessions; a full table refuses the newcomer instead of evicting', () => {
    let now = 0;
    const registry = new InMemorySessionStore(1000, 2, () => now);
    const a = registry.create('o1');
    const b = registry.create('o2');
    now = 500;
    expect(registry.get(a.id, 'o1')).toBe(a);
    const full = refusal(() => registry.create('o3'));
    expect(full.scope).toBe('server');
    expect(full.limit).toBe(2);
    expect(full.retryAfter).toBe(1); // b (least recently used) expires at 1000
    expect(full.message).toMatch(/maximum of 2 open MCP sessions: retry after 1s/);
    // Nobody was pushed out.
    expect(registry.get(a.id, 'o1')).toBe(a);
    expect(registry.get(b.id, 'o2')).toBe(b);
    now = 1600;
    expect(registry.get(a.id, 'o1')).toBeUndefined(); // idle 1100 ms
    // Expired sessions free their places for the next create.
    expect(registry.create('o3').owner).toBe('o3');
    expect(registry.size).toBe(1);
  });

  it("counts a user's sessions across all of its tokens and refuses past the cap, never touching another user's", () => {
    let now = 0;
    const store = new InMemorySessionStore(60_000, 1_000, () => now, { maxPerUser: 3 });
    const bob = store.create('bob-token', { user: 'bob' });
    const alice = [1, 2, 3].map((i) => store.create(`alice-token-${i}`, { user: 'alice' }));
    now = 10_000;
    for (let i = 4; i < 50; i++) {
      const error = refusal(() => store.create(`alice-token-${i}`, { user: 'alice' }));
      expect(error.scope).toBe('user');
      expect(error.limit).toBe(3);
      expect(error.retryAfter).toBe(50); // alice's oldest was last used at 0
      expect(error.message).toMatch(/Too many open MCP sessions for this user \(limit 3\)/);
      expect(error.message).toMatch(/DELETE/);
    }
    expect(store.countFor('alice')).toBe(3);
    // Bob's session and alice's first ones are all still there.
    expect(store.get(bob.id, 'bob-token')).toBe(bob);
    alice.forEach((s, i) => expect(store.get(s.id, `alice-token-${i + 1}`)).toBe(s));
    // Bob has his own allowance.
    store.create('bob-token-2', { user: 'bob' });
    expect(store.countFor('bob')).toBe(2);
    // Ending one of alice's sessions makes room for one more of hers.
    store.delete(alice[0].id);
    expect(store.countFor('alice')).toBe(2);
    expect(store.create('alice-token-99', { user: 'alice' }).user).toBe('alice');
    expect(() => store.create('alice-token-100', { user: 'alice' })).toThrow(SessionLimitError);
  });

  it("frees a user's places as their sessions expire", () => {
    let now = 0;
    const store = new InMemorySessionStore(1000, 100, () => now, { maxPerUser: 2 });
    const first = store.create('t1', { user: 'u' });
    now = 600;
    store.create('t2', { user: 'u' });
    expect(refusal(() => store.create('t3', { user: 'u' })).retryAfter).toBe(1);
    now = 1100; // first idle 1100 ms: expired
    expect(store.create('t3', { user: 'u' }).owner).toBe('t3');
    expect(store.get(first.id, 't1')).toBeUndefined();
    expect(store.countFor('u')).toBe(2);
  });

  it('counts by owner when no user is given (the former contract)', () => {
    const store = new InMemorySessionStore(60_000, 100, undefined, { maxPerOwner: 1 });
    store.create('o');
    expect(() => store.create('o')).toThrow(SessionLimitError);
    expect(store.create('p').owner).toBe('p');
  });

  it('ends an idle session on its own, with nobody asking for it (its ended$ fires)', () => {
    jest.useFakeTimers();
    try {
      let now = 0;
      const store = new InMemorySessionStore(2000, 100, () => now);
      const idle = store.create('idle');
      const busy = store.create('busy');
      const ended: string[] = [];
      idle.ended$.subscribe({ complete: () => ended.push('idle') });
      busy.ended$.subscribe({ complete: () => ended.push('busy') });
      now = 1500;
      store.get(busy.id, 'busy');
      now = 2100;
      jest.advanceTimersByTime(1000); // the sweep runs every idle/2 = 1000 ms
      expect(ended).toEqual(['idle']);
      expect(store.size).toBe(1);
      now = 3600;
      jest.advanceTimersByTime(1000);
      expect(ended).toEqual(['idle', 'busy']);
      // An empty table stops its timer; clear() stops it too.
      expect(jest.getTimerCount()).toBe(0);
      store.create('again');
      expect(jest.getTimerCount()).toBe(1);
      store.clear();
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
