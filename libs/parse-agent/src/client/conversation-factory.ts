import { ParseAgentConfigError } from '../core/errors';
import type {
  ConversationAgent,
  ConversationOptions,
  LlmProviderOptions,
} from '../ports/conversation';
import type { LlmProvider } from '../ports/llm-provider';
import { ParseAgentConversation } from './parse-agent-conversation';
import { createLlmProvider, LLM_ENV, LLM_PROVIDER_NAMES } from './provider-from-env';

type Env = Record<string, string | undefined>;

function isProvider(value: unknown): value is LlmProvider {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { complete?: unknown }).complete === 'function'
  );
}

/** True when LLM_PROVIDER names a provider: the environment asks for conversations. */
export function isLlmConfigured(env: Env = process.env): boolean {
  return Boolean(env[LLM_ENV.provider]?.trim());
}

/**
 * The provider an application configured: an LlmProvider instance as is, provider options built
 * into one, else LLM_PROVIDER and friends from the environment, else undefined (none configured).
 * A configuration that is present but wrong throws now, so it fails at boot and not at the first
 * question.
 */
export function resolveLlmProvider(
  configured: LlmProvider | LlmProviderOptions | undefined,
  env: Env = process.env,
): LlmProvider | undefined {
  if (isProvider(configured)) return configured;
  if (configured) return createLlmProvider(configured, env);
  return isLlmConfigured(env) ? createLlmProvider({}, env) : undefined;
}

export const NO_LLM_PROVIDER_MESSAGE =
  `No LLM provider is configured, so the agent cannot hold a conversation. Set ${LLM_ENV.provider} ` +
  `(one of: ${LLM_PROVIDER_NAMES.join(', ')}) with ${LLM_ENV.apiKey}, and optionally ${LLM_ENV.model} ` +
  `and ${LLM_ENV.baseURL}; or pass \`llm\` (settings) or \`llmProvider\` (your own LlmProvider) ` +
  'to ParseAgentModule.forRoot, or `llm` to ask().';

/**
 * Builds the conversation factory an agent's services carry, so `agent.ask()` can reach the
 * client. Per-call options win over `defaults`; with neither a provider nor `llm` options the
 * default provider is used, and without that the error says how to configure one.
 */
export function conversationFactory(
  defaults: { provider?: LlmProvider } & Omit<ConversationOptions, 'provider'> = {},
): (agent: ConversationAgent, options?: ConversationOptions) => ParseAgentConversation {
  const { provider: defaultProvider, ...defaultOptions } = defaults;
  return (agent, options = {}) => {
    const merged: ConversationOptions = { ...defaultOptions, ...options };
    if (!merged.provider && !options.llm) merged.provider = defaultProvider;
    if (!merged.provider && !merged.llm && !isLlmConfigured(merged.env ?? process.env)) {
      throw new ParseAgentConfigError(NO_LLM_PROVIDER_MESSAGE);
    }
    return new ParseAgentConversation(agent, merged);
  };
}
