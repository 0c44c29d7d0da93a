/**
 * Tokens a text will cost in a model's context, estimated without a tokenizer: the larger of
 * characters/4 and UTF-8 bytes/4, so multibyte text (CJK, emoji) is not undercounted.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Math.max(text.length, Buffer.byteLength(text, 'utf8')) / 4);
}

/** What the budget kept, and how many items (the lowest-ranked) it dropped. */
export interface BudgetOutcome<T> {
  kept: T[];
  dropped: number;
  /** Estimated tokens of what was kept. */
  tokens: number;
}

/**
 * Keeps items in rank order while their estimated tokens fit `budget`; the first item is always
 * kept (an answer of nothing helps nobody). `budget` 0 or less: no budget.
 */
export function applyTokenBudget<T>(
  items: readonly T[],
  budget: number,
  textOf: (item: T) => string,
): BudgetOutcome<T> {
  let tokens = 0;
  const kept: T[] = [];
  for (const item of items) {
    const cost = estimateTokens(textOf(item));
    if (budget > 0 && kept.length > 0 && tokens + cost > budget) break;
    kept.push(item);
    tokens += cost;
  }
  return { kept, dropped: items.length - kept.length, tokens };
}
