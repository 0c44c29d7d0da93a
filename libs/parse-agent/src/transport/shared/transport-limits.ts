/**
 * Limits every transport applies to what a client sends, whatever its framing: the largest message
 * (an HTTP body, a stdio line) and the deepest JSON nesting. The HTTP endpoint's `maxBodyBytes` and
 * `maxJsonDepth` default to these; stdio uses the same.
 */
export interface TransportLimits {
  /** Largest accepted message in bytes. */
  readonly maxMessageBytes: number;
  /** Deepest accepted JSON nesting. */
  readonly maxJsonDepth: number;
}

export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
export const DEFAULT_MAX_JSON_DEPTH = 20;

export const DEFAULT_TRANSPORT_LIMITS: TransportLimits = Object.freeze({
  maxMessageBytes: DEFAULT_MAX_BODY_BYTES,
  maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
});

/** The session table's defaults (the HTTP endpoint's `sessionIdleTimeoutMs` and `maxSessions`). */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
export const DEFAULT_MAX_SESSIONS = 10_000;
