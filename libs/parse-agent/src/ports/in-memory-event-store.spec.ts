import { UnknownEventError, type StoredMessage } from './event-store';
import { InMemoryEventStore } from './in-memory-event-store';

async function replay(store: InMemoryEventStore, after: string) {
  const sent: Array<[string, StoredMessage]> = [];
  const streamId = await store.replayEventsAfter(after, {
    send: (id, message) => {
      sent.push([id, message]);
      return Promise.resolve();
    },
  });
  return { streamId, sent };
}

describe('InMemoryEventStore', () => {
  it('replays the events of one stream after the given one, in order, and no other stream', async () => {
    const store = new InMemoryEventStore();
    const first = await store.storeEvent('s1', {});
    await store.storeEvent('s2', { other: true });
    const second = await store.storeEvent('s1', { n: 1 });
    await store.storeEvent('s1', { n: 2 });
    const { streamId, sent } = await replay(store, first);
    expect(streamId).toBe('s1');
    expect(sent.map(([, m]) => m)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(sent[0][0]).toBe(second);
    expect(await store.getStreamIdForEventId(second)).toBe('s1');
  });

  it('refuses unknown, expired and trimmed-away positions instead of replaying with a gap', async () => {
    let now = 0;
    const store = new InMemoryEventStore({
      retentionMs: 1000,
      maxEventsPerStream: 2,
      now: () => now,
    });
    const first = await store.storeEvent('s', {});
    await store.storeEvent('s', { n: 1 });
    await store.storeEvent('s', { n: 2 }); // trims the priming event: after it, n:1 is still held
    await expect(replay(store, first)).resolves.toBeDefined();
    await store.storeEvent('s', { n: 3 }); // now n:1 is gone: resuming from `first` would skip it
    await expect(replay(store, first)).rejects.toBeInstanceOf(UnknownEventError);
    await expect(replay(store, 'nope')).rejects.toBeInstanceOf(UnknownEventError);
    await expect(replay(store, 's_99')).rejects.toBeInstanceOf(UnknownEventError);
    const last = await store.storeEvent('s', { n: 4 });
    now = 5000;
    await expect(replay(store, last)).rejects.toBeInstanceOf(UnknownEventError);
    expect(store.size).toBe(0);
  });

  it('holds at most maxEvents, dropping the stalest streams first', async () => {
    const store = new InMemoryEventStore({ maxEvents: 3 });
    const old = await store.storeEvent('old', {});
    await store.storeEvent('new', {});
    await store.storeEvent('new', { n: 1 });
    await store.storeEvent('new', { n: 2 });
    expect(store.size).toBeLessThanOrEqual(3);
    await expect(replay(store, old)).rejects.toBeInstanceOf(UnknownEventError);
  });

  it('follow hears events stored afterwards on that stream only, until stopped', async () => {
    const store = new InMemoryEventStore();
    const heard: StoredMessage[] = [];
    const stop = await store.follow('s', (event) => heard.push(event.message));
    await store.storeEvent('s', { n: 1 });
    await store.storeEvent('t', { n: 9 });
    stop();
    await store.storeEvent('s', { n: 2 });
    expect(heard).toEqual([{ n: 1 }]);
  });
});
