import { InMemorySessionStore } from './in-memory-session-store';

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

  it('expires idle sessions and evicts the least recently used past the cap', () => {
    let now = 0;
    const registry = new InMemorySessionStore(1000, 2, () => now);
    const a = registry.create('o');
    const b = registry.create('o');
    now = 500;
    expect(registry.get(a.id, 'o')).toBe(a); // a is now the most recently used
    const c = registry.create('o'); // evicts b
    expect(registry.get(b.id, 'o')).toBeUndefined();
    expect(registry.size).toBe(2);
    now = 1600;
    expect(registry.get(a.id, 'o')).toBeUndefined(); // idle 1100 ms
    expect(registry.get(c.id, 'o')).toBeUndefined();
  });

  it("caps sessions per owner: one caller's flood ends its own oldest, never another's", () => {
    const store = new InMemorySessionStore(60_000, 1_000, undefined, { maxPerOwner: 3 });
    const victim = store.create('bob');
    const flood = Array.from({ length: 50 }, () => store.create('mallory'));
    expect(store.get(victim.id, 'bob')).toBeDefined();
    expect(store.countFor('mallory')).toBe(3);
    expect(store.get(flood[0].id, 'mallory')).toBeUndefined();
    expect(store.get(flood[49].id, 'mallory')).toBeDefined();
    store.delete(flood[49].id);
    expect(store.countFor('mallory')).toBe(2);
    expect(store.size).toBe(3);
  });
});
