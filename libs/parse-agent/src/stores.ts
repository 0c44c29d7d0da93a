// `nestjs-parse-agent/stores`: the in-memory implementations of the ports (the library's defaults
// without `redis`) and the shapes a store of your own keeps. The port tokens are root names; the
// Redis implementations are in `nestjs-parse-agent/redis`.
export {
  KeyedSlidingWindowRateLimiter,
  SlidingWindowRateLimiter,
} from './ports/in-memory-rate-limiter';
export { InMemorySessionStore } from './ports/in-memory-session-store';
export { SessionLimitError } from './ports/session-store';
export type { McpSession, SessionCreateOptions } from './ports/session-store';
export { InMemoryCancellationBus } from './ports/in-memory-cancellation-bus';
export type { RequestId } from './ports/cancellation-bus';
export { InMemoryEventStore } from './ports/in-memory-event-store';
export type { InMemoryEventStoreOptions } from './ports/in-memory-event-store';
export { UnknownEventError } from './ports/event-store';
export type { EventId, StoredEvent, StoredMessage, StreamId } from './ports/event-store';
