import { ParseAgentError } from '../core/errors';

/** Names one SSE stream (one streaming call) across reconnects and nodes. */
export type StreamId = string;
/** The `id:` of one SSE event; a client sends the last one it saw as `Last-Event-ID`. */
export type EventId = string;
/** A JSON-RPC message as stored; `{}` is the priming event that opens a stream. */
export type StoredMessage = object;

export interface StoredEvent {
  eventId: EventId;
  message: StoredMessage;
}

/**
 * Keeps the SSE events of streaming calls so a client that lost its connection can reconnect with
 * `Last-Event-ID` and get what it missed. The first three methods are the official MCP SDK's
 * `EventStore` contract (a store written for the SDK fits); `follow` is ours: it lets a node that
 * did not run the call pass on the events that are still to come.
 */
export interface EventStore {
  /** Stores one message of `streamId`; resolves to its event id. */
  storeEvent(streamId: StreamId, message: StoredMessage): Promise<EventId>;
  /** The stream an event id belongs to, or undefined when it is unknown or expired. */
  getStreamIdForEventId?(eventId: EventId): Promise<StreamId | undefined>;
  /**
   * Sends, in order, every event of the stream stored after `lastEventId`; resolves to the stream
   * id. Rejects when the event is unknown or expired.
   */
  replayEventsAfter(
    lastEventId: EventId,
    options: { send: (eventId: EventId, message: StoredMessage) => Promise<void> },
  ): Promise<StreamId>;
  /**
   * Calls `onEvent` for each event stored on `streamId` from now on (by any node sharing the store);
   * resolves once following is in effect, to the function that stops it. Without it a resumed
   * stream only gets the events stored before the reconnect.
   */
  follow?(streamId: StreamId, onEvent: (event: StoredEvent) => void): Promise<() => void>;
  /**
   * Shared stores: marks `streamId` as written by a call running on this node (a lease kept alive
   * until the returned function is called), so another node can tell a call whose node died from
   * one that is slow. `requestId` is the call's JSON-RPC id, for the error answer.
   */
  hold?(streamId: StreamId, requestId: string | number | null): () => void;
  /**
   * Shared stores: when no node holds `streamId` any more and its call never answered, stores a
   * JSON-RPC error with `error` as the call's answer (announced to followers like any event) and
   * resolves to that event. Resolves undefined while the call is held, answered, or unknown.
   */
  settleAbandoned?(
    streamId: StreamId,
    error: { code: number; message: string },
  ): Promise<StoredEvent | undefined>;
  /** Shared stores: how long a lease outlives its node (ms); resuming nodes check this often. */
  readonly leaseMs?: number;
}

/** How long a streaming call's lease outlives the last sign of its node, by default (ms). */
export const DEFAULT_CALL_LEASE_MS = 10_000;

/** Injection token for the EventStore. */
export const EventStore = Symbol('EventStore');

/** Thrown by `replayEventsAfter` when the event is unknown (never stored, expired or evicted). */
export class UnknownEventError extends ParseAgentError {
  readonly errorCode = 'unknown_event';
  constructor(eventId: EventId) {
    super(`Event ${JSON.stringify(eventId.slice(0, 120))} is unknown or expired`);
  }
}

/** Splits `<streamId>_<position>`; undefined when the id has no such shape. */
export function splitEventId(
  eventId: string,
): { streamId: StreamId; position: string } | undefined {
  const at = eventId.lastIndexOf('_');
  if (at <= 0 || at === eventId.length - 1 || eventId.length > 256) return undefined;
  return { streamId: eventId.slice(0, at), position: eventId.slice(at + 1) };
}
