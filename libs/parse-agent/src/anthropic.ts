// `nestjs-parse-agent/anthropic`: the Anthropic language model provider. Its types name
// @anthropic-ai/sdk (an optional peer dependency), so it stays out of the root entry point.
// createLlmProvider and the LLM_* settings reach it without this import.
export { AnthropicProvider } from './client/providers/anthropic.provider';
export type { AnthropicProviderOptions } from './client/providers/anthropic.provider';
