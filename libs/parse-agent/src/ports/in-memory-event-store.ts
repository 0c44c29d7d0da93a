import { Subject } from 'rxjs';
import {
  splitEventId,
  UnknownEventError,
  type EventId,
  type EventStore,
  type StoredEvent,
  type StoredMessage,
  type StreamId,
} from './event-store';

export interface InMemoryEventStoreOptions {
  /** How long a stream's events are kept after its last event (default 5 minutes). */
  retentionMs?: number;
  /** Events kept in all (default 10 000): the stalest streams go first above it. */
  maxEvents?: number;
  /** Events kept per stream (default 1 000): a longer stream cannot be resumed from its start. */
  maxEventsPerStream?: number;
  now?: () => number;
}

interface StreamEntry {
  events: Array<{ position: number; message: StoredMessage }>;
  /** Positions below this were dropped (per-stream cap): resuming from them is refused. */
  firstPosition: number;
  next: number;
  touched: number;
}

export const DEFAULT_EVENT_RETENTION_MS = 5 * 60 * 1000;
export const DEFAULT_MAX_EVENTS = 10_000;
export const DEFAULT_MAX_EVENTS_PER_STREAM = 1_000;

/**
 * Events of one process, bounded in time and count. Resuming works only against the node that ran
 * the call: scaled-out deployments use the Redis store.
 */
export class InMemoryEventStore implements EventStore {
  protected readonly streams = new Map<StreamId, StreamEntry>();
  protected readonly stored$ = new Subject<StoredEvent & { streamId: StreamId }>();
  protected total = 0;
  protected readonly retentionMs: number;
  protected readonly maxEvents: number;
  protected readonly maxEventsPerStream: number;
  protected readonly now: () => number;

  constructor(options: InMemoryEventStoreOptions = {}) {
    this.retentionMs = options.retentionMs ?? DEFAULT_EVENT_RETENTION_MS;
    this.maxEvents = options.maxEvents ?? DEFAULT_MAX_EVENTS;
    this.maxEventsPerStream = options.maxEventsPerStream ?? DEFAULT_MAX_EVENTS_PER_STREAM;
    this.now = options.now ?? (() => Date.now());
  }

  /** Events held now. */
  get size(): number {
    return this.total;
  }

  storeEvent(streamId: StreamId, message: StoredMessage): Promise<EventId> {
    this.sweep();
    let entry = this.streams.get(streamId);
    if (!entry) {
      entry = { events: [], firstPosition: 0, next: 0, touched: 0 };
    } else {
      this.streams.delete(streamId); // re-inserted below: the map stays in least-recent order
    }
    this.streams.set(streamId, entry);
    entry.touched = this.now();
    const position = entry.next++;
    entry.events.push({ position, message });
    this.total++;
    if (entry.events.length > this.maxEventsPerStream) {
      entry.events.shift();
      entry.firstPosition = entry.events[0].position;
      this.total--;
    }
    while (this.total > this.maxEvents) {
      const [oldestId, oldest] = this.streams.entries().next().value as [StreamId, StreamEntry];
      if (oldestId === streamId) break; // never evict the stream being written
      this.dropStream(oldestId, oldest);
    }
    const eventId = `${streamId}_${position}`;
    this.stored$.next({ streamId, eventId, message });
    return Promise.resolve(eventId);
  }

  getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return Promise.resolve(this.locate(eventId)?.streamId);
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: StoredMessage) => Promise<void> },
  ): Promise<StreamId> {
    const found = this.locate(lastEventId);
    if (!found) throw new UnknownEventError(lastEventId);
    const missed = found.entry.events.filter((event) => event.position > found.position);
    for (const event of missed) await send(`${found.streamId}_${event.position}`, event.message);
    return found.streamId;
  }

  follow(streamId: StreamId, onEvent: (event: StoredEvent) => void): Promise<() => void> {
    const subscription = this.stored$.subscribe((event) => {
      if (event.streamId === streamId) onEvent({ eventId: event.eventId, message: event.message });
    });
    return Promise.resolve(() => subscription.unsubscribe());
  }

  protected locate(
    eventId: EventId,
  ): { streamId: StreamId; position: number; entry: StreamEntry } | undefined {
    this.sweep();
    const parts = splitEventId(eventId);
    if (!parts || !/^\d+$/.test(parts.position)) return undefined;
    const entry = this.streams.get(parts.streamId);
    const position = Number(parts.position);
    // Events after it must all still be held, or the replay would silently skip some.
    if (!entry || position + 1 < entry.firstPosition || position >= entry.next) return undefined;
    return { streamId: parts.streamId, position, entry };
  }

  protected sweep(): void {
    const cutoff = this.now() - this.retentionMs;
    for (const [id, entry] of this.streams) {
      if (entry.touched > cutoff) break; // least recently written first
      this.dropStream(id, entry);
    }
  }

  protected dropStream(id: StreamId, entry: StreamEntry): void {
    this.streams.delete(id);
    this.total -= entry.events.length;
  }
}
