import type { ToolEnvelope } from '../core/envelope';
import type { LlmMessage, LlmProvider, LlmResponse } from './llm-provider';

/**
 * The port between an agent and a conversation with a language model. The agent layer sits below
 * the client, so `ParseAgent.ask()` reaches the client only through a `ConversationFactory` placed
 * in its services (the Nest module and the CLI put the client's ParseAgentConversation there).
 */

/** A tool as the agent describes it in MCP shape; the client passes it to the model unchanged. */
export interface ConversationToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/**
 * What a conversation needs from an agent: its allowed tools and a way to run one. ParseAgent has
 * both; tests and other hosts may supply their own.
 */
export interface ConversationAgent {
  toolDefinitions(options?: { format?: 'mcp' }): ConversationToolDefinition[];
  execute(
    toolName: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<ToolEnvelope>;
  /** Told of each model response (ParseAgent runs its onLlmResponse hooks). */
  llmResponded?(response: LlmResponseInfo): void;
  /** Told when a model request failed (ParseAgent runs its onError hooks, source `llm`). */
  llmFailed?(error: Error): void;
}

/** One language model response in a conversation, as an agent's onLlmResponse hooks see it. */
export interface LlmResponseInfo {
  /** Which model call of the question (1 for the first; 0 for a compaction summary). */
  iteration: number;
  /** The model that answered, as the provider named it. */
  model: string;
  text: string;
  /** The tools the model asked for (their arguments are in the conversation's history). */
  toolCalls: Array<{ id: string; name: string }>;
  stopReason?: string;
  usage: LlmResponse['usage'] & { costUsd: number | null };
}

/** Which provider to build, overriding LLM_PROVIDER, LLM_API_KEY, LLM_MODEL and LLM_BASE_URL. */
export interface LlmProviderOptions {
  /** openai, anthropic, openai-compatible, or a preset: lmstudio, ollama, vllm, deepseek. */
  provider?: string;
  apiKey?: string;
  model?: string;
  baseURL?: string;
  timeoutMs?: number;
  maxRetries?: number;
  /**
   * The only LLM base URLs requests may go to (default LLM_ALLOWED_BASE_URLS, comma-separated).
   * Unset: the provider's own endpoint and the configured base URL. Checked when the provider is
   * built and before every request.
   */
  allowedBaseUrls?: string[];
}

/** List price of a model in US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

/** The person a conversation's agent acts for, as the app verified it. */
export interface ConversationUser {
  objectId?: string;
  username?: string;
}

export interface ConversationOptions {
  /** The model to talk to. Without it one is built from `llm` options and the LLM_* environment. */
  provider?: LlmProvider;
  /** Provider settings (override LLM_PROVIDER, LLM_API_KEY, LLM_MODEL, LLM_BASE_URL). */
  llm?: LlmProviderOptions;
  /** Environment to read LLM_* from (default process.env). */
  env?: Record<string, string | undefined>;
  /** Model calls allowed per question, tool rounds included (default 8). */
  maxIterations?: number;
  /**
   * Replaces the default system prompt (the server instructions, whom the agent acts for, and the
   * Parse conventions). '' sends none.
   */
  systemPrompt?: string;
  /** Appended to the system prompt: the default, or `systemPrompt` when both are given. */
  systemPromptSuffix?: string;
  /**
   * Who the agent's session belongs to, named in the default system prompt so the model knows
   * whom it answers. Only objectId and username are read (a Parse user row may be passed as is;
   * its sessionToken never reaches the prompt). Take it from a verified session.
   */
  user?: ConversationUser;
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

/** Tokens and cost of model calls; a null cost means a model had no known price. */
export interface UsageTotals {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly costUsd: number | null;
  readonly calls: number;
  toString(): string;
}

/** What one question produced. `reply` continues the same conversation. */
export interface ConversationAnswer {
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly iterations: number;
  readonly toolCalls: readonly ToolCallRecord[];
  readonly transcript: readonly LlmMessage[];
  readonly usage: UsageTotals;
  reply(question: string, options?: Omit<AskOptions, 'reset'>): Promise<ConversationAnswer>;
}

/** A multi-turn conversation as the agent layer sees it. */
export interface AgentConversation {
  ask(question: string, options?: AskOptions): Promise<ConversationAnswer>;
  reply(question: string, options?: Omit<AskOptions, 'reset'>): Promise<ConversationAnswer>;
  reset(): void;
  readonly usage: UsageTotals;
  readonly history: LlmMessage[];
}

/** Opens a conversation between a language model and an agent. */
export type ConversationFactory = (
  agent: ConversationAgent,
  options?: ConversationOptions,
) => AgentConversation;
