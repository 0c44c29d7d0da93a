import { ParseAgentConfigError } from '../core/errors';
import { createLlmProvider } from './provider-from-env';
import { AnthropicProvider } from './providers/anthropic.provider';
import { loadOptionalSdk } from './providers/load-optional-sdk';
import { OpenAiProvider } from './providers/openai.provider';

describe('createLlmProvider', () => {
  it('says which variable to set when no provider is chosen', () => {
    expect(() => createLlmProvider({}, {})).toThrow(ParseAgentConfigError);
    expect(() => createLlmProvider({}, {})).toThrow(/LLM_PROVIDER.*openai, anthropic/);
  });

  it('names the accepted values for an unknown provider', () => {
    expect(() => createLlmProvider({}, { LLM_PROVIDER: 'gemini' })).toThrow(
      /Unknown LLM provider 'gemini'.*openai-compatible/,
    );
  });

  it('requires an API key for hosted providers and says where to put it', () => {
    expect(() => createLlmProvider({}, { LLM_PROVIDER: 'openai' })).toThrow(/LLM_API_KEY/);
    expect(() => createLlmProvider({ provider: 'anthropic' }, {})).toThrow(/LLM_API_KEY/);
    expect(() => createLlmProvider({}, { LLM_PROVIDER: 'deepseek', LLM_API_KEY: '  ' })).toThrow(
      /LLM_API_KEY/,
    );
  });

  it('requires an address for a generic OpenAI-compatible server and a model where there is no default', () => {
    expect(() => createLlmProvider({ provider: 'openai-compatible' }, {})).toThrow(/LLM_BASE_URL/);
    expect(() => createLlmProvider({ provider: 'ollama' }, {})).toThrow(/LLM_MODEL/);
  });

  it('builds providers from the environment with the defaults of each', () => {
    const openai = createLlmProvider({}, { LLM_PROVIDER: 'OpenAI', LLM_API_KEY: 'k' });
    expect(openai).toBeInstanceOf(OpenAiProvider);
    expect(openai.name).toBe('openai');
    expect(openai.model).toBe('gpt-4o-mini');

    const anthropic = createLlmProvider({}, { LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'k' });
    expect(anthropic).toBeInstanceOf(AnthropicProvider);
    expect(anthropic.model).toBe('claude-haiku-4-5');

    const local = createLlmProvider({}, { LLM_PROVIDER: 'lmstudio' });
    expect(local.name).toBe('openai-compatible');
    expect(local.model).toBe('qwen2.5-7b-instruct');
  });

  it('lets options override the environment', () => {
    const p = createLlmProvider(
      { provider: 'openai', model: 'gpt-4.1-mini', apiKey: 'opt' },
      { LLM_PROVIDER: 'anthropic', LLM_MODEL: 'claude-haiku-4-5' },
    );
    expect(p).toBeInstanceOf(OpenAiProvider);
    expect(p.model).toBe('gpt-4.1-mini');
  });
});

describe('loadOptionalSdk', () => {
  it('tells how to install a missing SDK', () => {
    expect(() => loadOptionalSdk('@example/not-installed-llm-sdk', 'example')).toThrow(
      /needs the '@example\/not-installed-llm-sdk' package.*npm install @example\/not-installed-llm-sdk/,
    );
  });
});
