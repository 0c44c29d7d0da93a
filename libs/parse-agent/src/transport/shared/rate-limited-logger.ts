import type { TransportLogger } from './transport-logger';

export interface RateLimitedLoggerOptions {
  /** Warnings of one kind written per window (default 10). */
  perWindow?: number;
  /** Window length (default 60 000 ms). */
  windowMs?: number;
  now?: () => number;
}

/**
 * Wraps a logger so a flood of bad requests cannot flood the log: warnings are grouped by kind
 * (the text before the first colon, e.g. "Unauthorized"), at most `perWindow` of a kind are written
 * per window, and the first warning of the next window says how many were dropped. Errors pass.
 */
export class RateLimitedLogger implements TransportLogger {
  protected readonly kinds = new Map<string, { start: number; written: number; dropped: number }>();
  protected readonly perWindow: number;
  protected readonly windowMs: number;
  protected readonly now: () => number;

  constructor(
    protected readonly inner: TransportLogger,
    options: RateLimitedLoggerOptions = {},
  ) {
    this.perWindow = options.perWindow ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    this.now = options.now ?? (() => Date.now());
  }

  warn(message: string): void {
    const kind = message.split(':', 1)[0].slice(0, 80);
    const at = this.now();
    let entry = this.kinds.get(kind);
    if (!entry || at - entry.start >= this.windowMs) {
      if (entry?.dropped) {
        this.inner.warn(
          `${kind}: ${entry.dropped} similar warning(s) suppressed in the last window`,
        );
      }
      // Bounded: kinds are few in practice, but their text comes from requests.
      if (!entry && this.kinds.size >= 1000) this.kinds.clear();
      entry = { start: at, written: 0, dropped: 0 };
      this.kinds.set(kind, entry);
    }
    if (entry.written >= this.perWindow) {
      entry.dropped++;
      return;
    }
    entry.written++;
    this.inner.warn(message);
  }

  error(message: string, trace?: string): void {
    this.inner.error(message, trace);
  }

  log(message: string): void {
    this.inner.log?.(message);
  }
}
