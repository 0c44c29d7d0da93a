// `nestjs-parse-agent/llm`: conversations with a language model (the client side of `agent.ask()`
// and `ParseAgentFactory.conversation()`), the messages an LlmProvider exchanges, the provider
// settings (`llm` option, LLM_* variables) and prices. The LlmProvider token is a root name; the
// providers whose types name an SDK are in `/openai` and `/anthropic`.
export { ParseAgentConversation, DEFAULT_MAX_ITERATIONS } from './client/parse-agent-conversation';
export { ConversationResult } from './client/conversation-result';
export type { ConversationEvent } from './client/conversation-result';
export { ConversationUsage } from './client/conversation-usage';
export { ConversationBusyError, LlmProviderError } from './client/conversation-errors';
export {
  conversationFactory,
  isLlmConfigured,
  resolveLlmProvider,
} from './client/conversation-factory';
export {
  CONVERSATION_SNAPSHOT_VERSION,
  DEFAULT_RESTORE_MAX_BYTES,
  DEFAULT_RESTORE_MAX_MESSAGES,
} from './client/conversation-snapshot';
export type {
  ConversationSnapshot,
  RestoreLimits,
  SnapshotMessage,
} from './client/conversation-snapshot';
export type {
  AgentConversation,
  AskOptions,
  ConversationAgent,
  ConversationAnswer,
  ConversationFactory,
  ConversationOptions,
  ConversationToolDefinition,
  ConversationUser,
  FinishReason,
  LlmProviderOptions,
  LlmResponseInfo,
  ModelPrice,
  ToolCallRecord,
  UsageTotals,
} from './ports/conversation';

// Providers: built from settings, and the endpoints they may reach
export { createLlmProvider, LLM_ENV, LLM_PROVIDER_NAMES } from './client/provider-from-env';
export { LLM_ALLOWED_BASE_URLS_ENV, OFFICIAL_LLM_ENDPOINTS } from './client/endpoint-allowlist';
export { DEFAULT_MODEL_PRICES } from './client/model-prices';
export type { ModelPriceTable } from './client/model-prices';

// What an LlmProvider receives and answers
export type {
  LlmAssistantMessage,
  LlmMessage,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  LlmSystemMessage,
  LlmToolCall,
  LlmToolDefinition,
  LlmToolMessage,
  LlmUsage,
  LlmUserMessage,
} from './ports/llm-provider';

// Embeddings for retrieval: the provider's shapes and the OpenAI-compatible /v1/embeddings client
// (OpenAI, Azure, Ollama, LM Studio, vLLM through baseURL; the openai package is loaded on use).
export type { EmbeddingResult, EmbeddingUsage, EmbedOptions } from './ports/embedding-provider';
export { OpenAiCompatibleEmbeddings } from './client/embeddings/openai-compatible-embeddings';
export type { OpenAiCompatibleEmbeddingsOptions } from './client/embeddings/openai-compatible-embeddings';
