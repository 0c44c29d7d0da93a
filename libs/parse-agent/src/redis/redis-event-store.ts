import {
  DEFAULT_CALL_LEASE_MS,
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
 * stream's channel, atomically: a node following the stream sees every event exactly once. The same
 * round trip keeps the call's lease: ARGV[4] `held` (the call runs on this node) renews it and
 * records the call's JSON-RPC id; `final` (the call's answer) marks the call answered and drops it.
 * KEYS: stream, channel, lease, call. ARGV: max events, message, retention ms, kind, request id
 * (JSON), lease ms.
 */
const STORE_EVENT = new RedisScript(`
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'm', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] == 'final' then
  redis.call('SET', KEYS[4], 'done', 'PX', ARGV[3])
  redis.call('DEL', KEYS[3])
elseif ARGV[4] == 'held' and redis.call('GET', KEYS[4]) ~= 'done' then
  redis.call('SET', KEYS[4], ARGV[5], 'PX', ARGV[3])
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[6])
end
redis.call('PUBLISH', KEYS[2], id .. ' ' .. ARGV[2])
return id
`);

/** Renews a held call's lease unless the call has answered. KEYS: lease, call. ARGV: lease ms. */
const RENEW_LEASE = new RedisScript(`
if redis.call('GET', KEYS[2]) == 'done' then return 0 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return 1
`);

/**
 * Answers a call whose lease expired before it answered (its node stopped): appends a JSON-RPC
 * error with the call's id, marks the call answered and announces the event; nil otherwise.
 * KEYS: stream, channel, lease, call. ARGV: max events, retention ms, error object (JSON).
 */
const SETTLE_ABANDONED = new RedisScript(`
if redis.call('EXISTS', KEYS[3]) == 1 then return false end
local call = redis.call('GET', KEYS[4])
if not call or call == 'done' then return false end
local message = '{"jsonrpc":"2.0","id":' .. call .. ',"error":' .. ARGV[3] .. '}'
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'm', message)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[4], 'done', 'PX', ARGV[2])
redis.call('PUBLISH', KEYS[2], id .. ' ' .. message)
return {id, message}
`);

export interface RedisEventStoreOptions {
  /** How long a stream's events are kept after its last event (default 5 minutes). */
  retentionMs?: number;
  /** Events kept per stream (default 1 000); older ones are trimmed. */
  maxEventsPerStream?: number;
  /**
   * How long a streaming call's lease outlives the last sign of life of the node running it
   * (default 10 s; renewed every third of it). A client resuming on another node after that gets
   * an error answer instead of waiting for a call whose node stopped.
   */
  callLeaseMs?: number;
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
  readonly leaseMs: number;
  /** Calls running on this node: stream id to the call's JSON-RPC id (JSON). */
  protected readonly held = new Map<StreamId, string>();

  constructor(
    protected readonly redis: RedisConnection,
    options: RedisEventStoreOptions = {},
  ) {
    this.retentionMs = Math.ceil(options.retentionMs ?? DEFAULT_EVENT_RETENTION_MS);
    this.maxEventsPerStream = options.maxEventsPerStream ?? DEFAULT_MAX_EVENTS_PER_STREAM;
    this.leaseMs = Math.max(100, Math.ceil(options.callLeaseMs ?? DEFAULT_CALL_LEASE_MS));
  }

  async storeEvent(streamId: StreamId, message: StoredMessage): Promise<EventId> {
    const requestId = this.held.get(streamId);
    const kind = isAnswer(message) ? 'final' : requestId !== undefined ? 'held' : '';
    const entryId = await STORE_EVENT.run(
      this.redis.client,
      [
        this.streamKey(streamId),
        this.channel(streamId),
        this.leaseKey(streamId),
        this.callKey(streamId),
      ],
      [
        this.maxEventsPerStream,
        JSON.stringify(message),
        this.retentionMs,
        kind,
        requestId ?? '',
        this.leaseMs,
      ],
    );
    return `${streamId}_${String(entryId)}`;
  }

  hold(streamId: StreamId, requestId: string | number | null): () => void {
    this.held.set(streamId, JSON.stringify(requestId));
    // Events renew the lease as they are stored; this covers a call that is quiet for a while.
    const timer = setInterval(
      () => {
        RENEW_LEASE.run(
          this.redis.client,
          [this.leaseKey(streamId), this.callKey(streamId)],
          [this.leaseMs],
        ).catch(() => undefined);
      },
      Math.ceil(this.leaseMs / 3),
    );
    timer.unref?.();
    return () => {
      clearInterval(timer);
      this.held.delete(streamId);
    };
  }

  async settleAbandoned(
    streamId: StreamId,
    error: { code: number; message: string },
  ): Promise<StoredEvent | undefined> {
    const settled = (await SETTLE_ABANDONED.run(
      this.redis.client,
      [
        this.streamKey(streamId),
        this.channel(streamId),
        this.leaseKey(streamId),
        this.callKey(streamId),
      ],
      [this.maxEventsPerStream, this.retentionMs, JSON.stringify(error)],
    )) as [string, string] | null;
    const message = settled ? decode(settled[1]) : undefined;
    return settled && message ? { eventId: `${streamId}_${settled[0]}`, message } : undefined;
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

  // The scripts use a stream's four keys together (the channel travels as a key too): on a Redis
  // Cluster they share the stream id as hash tag, so each script stays in one slot.
  protected streamKey(streamId: StreamId): string {
    return this.redis.slotKey(streamId, 'events', streamId);
  }

  protected leaseKey(streamId: StreamId): string {
    return this.redis.slotKey(streamId, 'events-lease', streamId);
  }

  protected callKey(streamId: StreamId): string {
    return this.redis.slotKey(streamId, 'events-call', streamId);
  }

  protected channel(streamId: StreamId): string {
    return this.redis.slotKey(streamId, 'events-live', streamId);
  }
}

/** A JSON-RPC response: the call's answer, the last event of its stream. */
function isAnswer(message: StoredMessage): boolean {
  return 'id' in message && !('method' in message) && ('result' in message || 'error' in message);
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
