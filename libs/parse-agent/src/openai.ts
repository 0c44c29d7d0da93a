// `nestjs-parse-agent/openai`: the OpenAI (and OpenAI-compatible) language model provider. Its types
// name the openai package (an optional peer dependency), so it stays out of the root entry point.
// createLlmProvider and the LLM_* settings reach it without this import.
export { OpenAiProvider } from './client/providers/openai.provider';
export type { OpenAiProviderOptions } from './client/providers/openai.provider';
