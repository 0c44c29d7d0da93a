import type { ModelPrice } from '../ports/conversation';
import type { LlmUsage } from '../ports/llm-provider';

export type { ModelPrice };

export type ModelPriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * Published list prices (USD per million tokens) for common models. Prices change: pass `pricing` to
 * the conversation to correct or extend this table. Models not listed are priced as unknown (null),
 * never guessed.
 */
export const DEFAULT_MODEL_PRICES: ModelPriceTable = Object.freeze({
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-opus-4-1': { input: 15, output: 75 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
});

// Providers answer with dated snapshots (gpt-4o-2024-08-06, claude-haiku-4-5-20251001); those share
// the base model's price. Other suffixes (-audio-preview, -search) are different products.
const SNAPSHOT_SUFFIX = /^-(\d{4}-\d{2}-\d{2}|\d{8})$/;

/** The price for a model: exact name first, then the base name of a dated snapshot. */
export function priceFor(model: string, table: ModelPriceTable): ModelPrice | undefined {
  if (Object.prototype.hasOwnProperty.call(table, model)) return table[model];
  for (const key of Object.keys(table)) {
    if (model.startsWith(key) && SNAPSHOT_SUFFIX.test(model.slice(key.length))) return table[key];
  }
  return undefined;
}

/** Cost in USD of one call's usage, or null when the price is unknown. */
export function costOf(usage: LlmUsage, price: ModelPrice | undefined): number | null {
  if (!price) return null;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}

/** Checks a user-supplied table so a typo fails at construction, not as a wrong bill. */
export function validatePriceTable(table: Record<string, unknown>): ModelPriceTable {
  for (const [model, price] of Object.entries(table)) {
    const p = price as Partial<ModelPrice> | null;
    const valid =
      !!p &&
      typeof p === 'object' &&
      Number.isFinite(p.input) &&
      Number.isFinite(p.output) &&
      (p.input as number) >= 0 &&
      (p.output as number) >= 0;
    if (!valid) {
      throw new TypeError(
        `pricing['${model}'] must be { input, output } in USD per million tokens (non-negative numbers), got ${JSON.stringify(price)}.`,
      );
    }
  }
  return table as ModelPriceTable;
}
