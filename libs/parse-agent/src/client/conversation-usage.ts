import type { LlmUsage } from '../ports/llm-provider';

/**
 * Tokens and cost of one or more model calls. Immutable: `plus` returns a new total. A null cost
 * means at least one call used a model without a known price; it stays null when summed.
 */
export class ConversationUsage {
  static readonly empty = new ConversationUsage(0, 0, 0, 0);

  constructor(
    readonly inputTokens: number,
    readonly outputTokens: number,
    readonly costUsd: number | null,
    readonly calls: number,
  ) {}

  /** The usage of one model call priced at `cost` (null when the model has no known price). */
  static ofCall(usage: LlmUsage, cost: number | null): ConversationUsage {
    return new ConversationUsage(usage.inputTokens, usage.outputTokens, cost, 1);
  }

  get totalTokens(): number {
    return this.inputTokens + this.outputTokens;
  }

  plus(other: ConversationUsage): ConversationUsage {
    return new ConversationUsage(
      this.inputTokens + other.inputTokens,
      this.outputTokens + other.outputTokens,
      this.costUsd === null || other.costUsd === null ? null : this.costUsd + other.costUsd,
      this.calls + other.calls,
    );
  }

  /** e.g. `84 in + 120 out = 204 tokens $0.000085` or `... tokens (cost unknown)`. */
  toString(): string {
    const cost = this.costUsd === null ? '(cost unknown)' : `$${this.costUsd.toFixed(6)}`;
    return `${this.inputTokens} in + ${this.outputTokens} out = ${this.totalTokens} tokens ${cost}`;
  }

  toJSON(): {
    input_tokens: number;
    output_tokens: number;
    total_tokens: number;
    cost_usd: number | null;
    calls: number;
  } {
    return {
      input_tokens: this.inputTokens,
      output_tokens: this.outputTokens,
      total_tokens: this.totalTokens,
      cost_usd: this.costUsd,
      calls: this.calls,
    };
  }
}
