import { RateLimitExceededError } from '../core/errors';
import type { EmbeddingSpendLimiter } from './retrieval-call';

export interface EmbeddingSpendCapOptions {
  /** Most embedding tokens one tenant may spend in a window. */
  maxTokens: number;
  /** The window, in seconds (sliding). */
  windowSeconds: number;
}

/**
 * A per-tenant cap on embedding tokens over a sliding window, in this process. A query's tokens
 * are estimated from its text before it is embedded (characters and bytes, the larger), so an
 * agent cannot run up a bill with long queries; once the cap is reached calls are refused with
 * `rate_limited` and `retryAfter` (when enough of the window has passed). Admin agents are not
 * charged. Several nodes: implement EmbeddingSpendLimiter on a shared store.
 */
export class EmbeddingSpendCap implements EmbeddingSpendLimiter {
  protected readonly spent = new Map<string, Array<{ at: number; tokens: number }>>();

  constructor(
    readonly options: EmbeddingSpendCapOptions,
    protected readonly now: () => number = Date.now,
  ) {
    const { maxTokens, windowSeconds } = options;
    if (!(Number.isFinite(maxTokens) && maxTokens > 0 && windowSeconds > 0)) {
      throw new RangeError(
        'EmbeddingSpendCap: maxTokens and windowSeconds must be positive numbers.',
      );
    }
  }

  charge(tenantKey: string, tokens: number): void {
    const now = this.now();
    const windowMs = this.options.windowSeconds * 1000;
    const entries = (this.spent.get(tenantKey) ?? []).filter((e) => e.at > now - windowMs);
    let used = entries.reduce((sum, e) => sum + e.tokens, 0);
    if (used + tokens > this.options.maxTokens) {
      // Wait until enough of the oldest spend leaves the window for this charge to fit.
      let retryAt = now;
      for (const e of entries) {
        used -= e.tokens;
        retryAt = e.at + windowMs;
        if (used + tokens <= this.options.maxTokens) break;
      }
      this.spent.set(tenantKey, entries);
      const retryAfter = Math.max(0.1, (retryAt - now) / 1000);
      throw new RateLimitExceededError(
        retryAfter,
        this.options.maxTokens,
        this.options.windowSeconds,
        `Embedding spend cap reached for this tenant (${this.options.maxTokens} tokens per ${this.options.windowSeconds}s). Retry after ${retryAfter.toFixed(1)}s`,
      );
    }
    entries.push({ at: now, tokens });
    this.spent.set(tenantKey, entries);
  }
}
