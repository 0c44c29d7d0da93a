import type { ToolEnvelope } from '../core/envelope';
import type { LlmProvider } from '../ports/llm-provider';
import type { ModelPrice } from './model-prices';
import type { LlmProviderOptions } from './provider-from-env';

export const DEFAULT_MAX_ITERATIONS = 8;

export interface ConversationOptions {
  /** The model to talk to. Without it one is built from `llm` options and the LLM_* environment. */
  provider?: LlmProvider;
  /** Provider settings (override LLM_PROVIDER, LLM_API_KEY, LLM_MODEL, LLM_BASE_URL). */
  llm?: LlmProviderOptions;
  /** Environment to read LLM_* from (default process.env). */
  env?: Record<string, string | undefined>;
  /** Model calls allowed per question, tool rounds included (default 8). */
  maxIterations?: number;
  /** Sent first in every request. */
  systemPrompt?: string;
  /** Output cap per model call. */
  maxTokens?: number;
  /** Prices in USD per million tokens, merged over DEFAULT_MODEL_PRICES. */
  pricing?: Record<string, ModelPrice>;
  /**
   * Compact the history before a continued question once this many tokens were spent since the
   * last compaction or reset. Off when unset.
   */
  autoCompactAt?: number;
}

export interface AskOptions {
  /** Start from an empty history (ask: true by default; reply: always false). */
  reset?: boolean;
  /** Aborting stops the model request and any running tool; the question then rejects. */
  signal?: AbortSignal;
}

/** One tool the model called during a question. */
export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  success: boolean;
  durationMs: number;
  /** The envelope the model received. */
  result: ToolEnvelope;
}

/** `completed`: the model answered. `max_iterations`: the model still wanted tools at the cap. */
export type FinishReason = 'completed' | 'max_iterations';
