import {
  splitEventId,
  UnknownEventError,
  type EventId,
  type EventStore,
  type StoredEvent,
  type StoredMessage,
  type StreamId,
} from '../ports/event-store';
import {
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_MAX_EVENTS_PER_STREAM,
} from '../ports/in-memory-event-store';
import type { RedisConnection } from './redis-connection';
import { RedisScript } from './redis-script';

/**
 * Appends one event to the stream's Redis stream (capped), renews its expiry and announces it on the
 * stream's channel, atomically: a node following the stream sees every event exactly once.
 */
const STORE_EVENT = new RedisScript(`
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'm', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', KEYS[2], id .. ' ' .. ARGV[2])
return id
`);

export interface RedisEventStoreOptions {
  /** How long a stream's events are kept after its last event (default 5 minutes). */
  retentionMs?: number;
  /** Events kept per stream (default 1 000); older ones are trimmed. */
  maxEventsPerStream?: number;
}

type RawEntry = [string, string[]];

/**
 * Events of streaming calls in Redis streams (one per call, expiring), so a client can resume with
 * `Last-Event-ID` on any node: the node replays what was stored and follows the rest live through
 * pub/sub while the node running the call keeps adding to it. Event ids are `<streamId>_<entry id>`.
 */
export class RedisEventStore implements EventStore {
  protected readonly retentionMs: number;
  protected readonly maxEventsPerStream: number;

  constructor(
    protected readonly redis: RedisConnection,
    options: RedisEventStoreOptions = {},
  ) {
    this.retentionMs = Math.ceil(options.retentionMs ?? DEFAULT_EVENT_RETENTION_MS);
    this.maxEventsPerStream = options.maxEventsPerStream ?? DEFAULT_MAX_EVENTS_PER_STREAM;
  }

  async storeEvent(streamId: StreamId, message: StoredMessage): Promise<EventId> {
    const entryId = await STORE_EVENT.run(
      this.redis.client,
      [this.streamKey(streamId), this.channel(streamId)],
      [this.maxEventsPerStream, JSON.stringify(message), this.retentionMs],
    );
    return `${streamId}_${String(entryId)}`;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const parts = this.parse(eventId);
    if (!parts) return undefined;
    return (await this.holds(parts.streamId, parts.position)) ? parts.streamId : undefined;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: StoredMessage) => Promise<void> },
  ): Promise<StreamId> {
    const parts = this.parse(lastEventId);
    // The event itself must still be held (trimming drops the oldest first), or some of the events
    // after it may be gone and the replay would skip them without saying so.
    if (!parts || !(await this.holds(parts.streamId, parts.position))) {
      throw new UnknownEventError(lastEventId);
    }
    const entries = (await this.redis.client.xrange(
      this.streamKey(parts.streamId),
      `(${parts.position}`,
      '+',
    )) as RawEntry[];
    for (const [entryId, fields] of entries) {
      const message = decode(fields[1]);
      if (message) await send(`${parts.streamId}_${entryId}`, message);
    }
    return parts.streamId;
  }

  follow(streamId: StreamId, onEvent: (event: StoredEvent) => void): Promise<() => void> {
    return this.redis.subscribe(this.channel(streamId), (text) => {
      const space = text.indexOf(' ');
      const message = space > 0 ? decode(text.slice(space + 1)) : undefined;
      if (message) onEvent({ eventId: `${streamId}_${text.slice(0, space)}`, message });
    });
  }

  protected parse(eventId: EventId): { streamId: StreamId; position: string } | undefined {
    const parts = splitEventId(eventId);
    return parts && /^\d+-\d+$/.test(parts.position) ? parts : undefined;
  }

  protected async holds(streamId: StreamId, position: string): Promise<boolean> {
    const found = await this.redis.client.xrange(this.streamKey(streamId), position, position);
    return found.length > 0;
  }

  protected streamKey(streamId: StreamId): string {
    return this.redis.key('events', streamId);
  }

  protected channel(streamId: StreamId): string {
    return this.redis.key('events-live', streamId);
  }
}

function decode(text: string | undefined): StoredMessage | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as StoredMessage)
      : undefined;
  } catch {
    return undefined;
  }
}
