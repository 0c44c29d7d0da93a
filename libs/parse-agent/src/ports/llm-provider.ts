/**
 * The port between a conversation and a language model. A provider turns one request (system
 * prompt, messages, tool definitions) into one model turn: text and/or tool calls, with token usage.
 * The conversation owns the tool loop; a provider never runs tools.
 */

/** A tool the model may call: the agent's MCP definition, passed through unchanged. */
export interface LlmToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One call the model asked for, with its arguments already parsed from JSON. */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the model's argument text was not a JSON object; the tool is then not run. */
  invalidArguments?: string;
}

export interface LlmSystemMessage {
  role: 'system';
  content: string;
}

export interface LlmUserMessage {
  role: 'user';
  content: string;
}

export interface LlmAssistantMessage {
  role: 'assistant';
  content: string;
  toolCalls?: LlmToolCall[];
}

/** A tool's result handed back to the model; `isError` marks a failure envelope. */
export interface LlmToolMessage {
  role: 'tool';
  toolCallId: string;
  name: string;
  content: string;
  isError?: boolean;
}

export type LlmMessage = LlmSystemMessage | LlmUserMessage | LlmAssistantMessage | LlmToolMessage;

/** Tokens one model call consumed, as the provider reported them. */
export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface LlmRequest {
  /** Prepended to every request; system messages in `messages` are appended to it. */
  system?: string;
  messages: LlmMessage[];
  tools?: LlmToolDefinition[];
  maxTokens?: number;
  /** Aborting cancels the HTTP request. */
  signal?: AbortSignal;
}

/** What streaming providers report while the response is still arriving. */
export type LlmStreamEvent =
  { type: 'text'; text: string } | { type: 'tool_call'; call: LlmToolCall };

export interface LlmResponse {
  text: string;
  toolCalls: LlmToolCall[];
  usage: LlmUsage;
  /** The model that answered, as the provider named it (may be a dated snapshot). */
  model: string;
  stopReason?: string;
}

export interface LlmProvider {
  /** Short provider name for messages and logs: `openai`, `anthropic`, `openai-compatible`. */
  readonly name: string;
  /** The model requests are sent to; also the key for the price table. */
  readonly model: string;
  /**
   * Runs one model turn. With `onEvent` the provider streams and reports text and tool calls as
   * they arrive; the resolved response is the same either way.
   */
  complete(request: LlmRequest, onEvent?: (event: LlmStreamEvent) => void): Promise<LlmResponse>;
}

/** Injection token for an LlmProvider (same name as the interface, as in nestjs/throttler). */
export const LlmProvider = Symbol('LlmProvider');
