import { ParseAgentConfigError } from '../core/errors';
import type { LlmProviderOptions } from '../ports/conversation';
import type { LlmProvider } from '../ports/llm-provider';
import { allowlistFrom, OFFICIAL_LLM_ENDPOINTS } from './endpoint-allowlist';
import { AnthropicProvider } from './providers/anthropic.provider';
import { OpenAiProvider } from './providers/openai.provider';

/** Environment variables that choose and configure the provider. */
export const LLM_ENV = {
  provider: 'LLM_PROVIDER',
  apiKey: 'LLM_API_KEY',
  model: 'LLM_MODEL',
  baseURL: 'LLM_BASE_URL',
} as const;

export type { LlmProviderOptions };

interface Preset {
  sdk: 'openai' | 'anthropic';
  baseURL?: string;
  model?: string;
  /** Local servers ignore the key; the SDK still wants a non-empty one. */
  keyRequired: boolean;
}

const PRESETS: Record<string, Preset> = {
  openai: { sdk: 'openai', model: 'gpt-4o-mini', keyRequired: true },
  anthropic: { sdk: 'anthropic', model: 'claude-haiku-4-5', keyRequired: true },
  deepseek: {
    sdk: 'openai',
    baseURL: 'https://api.deepseek.com',
    model: 'deepseek-chat',
    keyRequired: true,
  },
  lmstudio: {
    sdk: 'openai',
    baseURL: 'http://localhost:1234/v1',
    model: 'qwen2.5-7b-instruct',
    keyRequired: false,
  },
  ollama: { sdk: 'openai', baseURL: 'http://localhost:11434/v1', keyRequired: false },
  vllm: { sdk: 'openai', baseURL: 'http://localhost:8000/v1', keyRequired: false },
  'openai-compatible': { sdk: 'openai', keyRequired: false },
};

export const LLM_PROVIDER_NAMES = Object.keys(PRESETS);

const LOCAL_PLACEHOLDER_KEY = 'not-needed';

function setting(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * Builds the provider from options, falling back to LLM_PROVIDER, LLM_API_KEY, LLM_MODEL and
 * LLM_BASE_URL. Throws ParseAgentConfigError naming the missing setting.
 */
export function createLlmProvider(
  options: LlmProviderOptions = {},
  env: Record<string, string | undefined> = process.env,
): LlmProvider {
  const kind = setting(options.provider ?? env[LLM_ENV.provider])?.toLowerCase();
  if (!kind) {
    throw new ParseAgentConfigError(
      `No LLM provider configured. Set ${LLM_ENV.provider} (or pass provider) to one of: ${LLM_PROVIDER_NAMES.join(', ')}.`,
    );
  }
  const preset = PRESETS[kind];
  if (!preset) {
    throw new ParseAgentConfigError(
      `Unknown LLM provider '${kind}'. Use one of: ${LLM_PROVIDER_NAMES.join(', ')} (any other OpenAI-compatible server: openai-compatible with ${LLM_ENV.baseURL}).`,
    );
  }
  const baseURL = setting(options.baseURL ?? env[LLM_ENV.baseURL]) ?? preset.baseURL;
  if (kind === 'openai-compatible' && !baseURL) {
    throw new ParseAgentConfigError(
      `The openai-compatible provider needs the server's address: set ${LLM_ENV.baseURL} (or pass baseURL), e.g. http://localhost:1234/v1.`,
    );
  }
  const model = setting(options.model ?? env[LLM_ENV.model]) ?? preset.model;
  if (!model) {
    throw new ParseAgentConfigError(
      `The ${kind} provider has no default model: set ${LLM_ENV.model} (or pass model) to a model the server serves.`,
    );
  }
  let apiKey = setting(options.apiKey ?? env[LLM_ENV.apiKey]);
  if (!apiKey) {
    if (preset.keyRequired) {
      throw new ParseAgentConfigError(
        `The ${kind} provider needs an API key: set ${LLM_ENV.apiKey} (or pass apiKey).`,
      );
    }
    apiKey = LOCAL_PLACEHOLDER_KEY;
  }
  // Without an explicit list the provider is pinned to what was configured at build time: its
  // preset (or official) endpoint and the base URL given. A list, once set, is the only authority.
  const allowedBaseUrls = allowlistFrom(options.allowedBaseUrls, env) ?? [
    preset.baseURL ?? OFFICIAL_LLM_ENDPOINTS[preset.sdk],
    ...(baseURL ? [baseURL] : []),
  ];
  const common = {
    apiKey,
    model,
    baseURL,
    timeoutMs: options.timeoutMs,
    maxRetries: options.maxRetries,
    allowedBaseUrls,
  };
  if (preset.sdk === 'anthropic') return new AnthropicProvider(common);
  return new OpenAiProvider({
    ...common,
    name: kind === 'openai' ? 'openai' : 'openai-compatible',
  });
}
