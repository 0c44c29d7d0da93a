import { ParseAgentConfigError } from '../core/errors';
import { allowlistFrom, assertAllowedEndpoint, isAllowedEndpoint } from './endpoint-allowlist';
import { createLlmProvider } from './provider-from-env';

describe('LLM endpoint allowlist', () => {
  it('allows an entry and the paths under it, nothing on another host, port, scheme or path', () => {
    const allowed = ['https://gw.example.com/v1'];
    expect(isAllowedEndpoint('https://gw.example.com/v1', allowed)).toBe(true);
    expect(isAllowedEndpoint('https://gw.example.com/v1/', allowed)).toBe(true);
    expect(isAllowedEndpoint('https://gw.example.com/v1/deep', allowed)).toBe(true);
    expect(isAllowedEndpoint('https://gw.example.com/v1evil', allowed)).toBe(false);
    expect(isAllowedEndpoint('https://gw.example.com/', allowed)).toBe(false);
    expect(isAllowedEndpoint('http://gw.example.com/v1', allowed)).toBe(false);
    expect(isAllowedEndpoint('https://gw.example.com:8443/v1', allowed)).toBe(false);
    expect(isAllowedEndpoint('https://gw.example.com.evil.io/v1', allowed)).toBe(false);
    expect(isAllowedEndpoint('https://evil.io/v1?x=https://gw.example.com/v1', allowed)).toBe(
      false,
    );
  });

  it('refuses with an error naming the URL and the setting', () => {
    expect(() =>
      assertAllowedEndpoint('https://evil.io/v1', ['https://api.openai.com/v1']),
    ).toThrow(
      /https:\/\/evil\.io\/v1 is not in the allowlist[\s\S]*allowedBaseUrls[\s\S]*LLM_ALLOWED_BASE_URLS/,
    );
  });

  it('reads LLM_ALLOWED_BASE_URLS, lets the option win, and refuses an empty or malformed list', () => {
    expect(allowlistFrom(undefined, {})).toBeUndefined();
    expect(
      allowlistFrom(undefined, { LLM_ALLOWED_BASE_URLS: ' https://a.io/v1 , https://b.io ' }),
    ).toEqual(['https://a.io/v1', 'https://b.io']);
    expect(allowlistFrom(['https://c.io'], { LLM_ALLOWED_BASE_URLS: 'https://a.io' })).toEqual([
      'https://c.io',
    ]);
    expect(() => allowlistFrom(undefined, { LLM_ALLOWED_BASE_URLS: ' , ' })).toThrow(/empty/);
    expect(() => allowlistFrom(['not a url'], {})).toThrow(ParseAgentConfigError);
    expect(() => allowlistFrom(['file:///etc'], {})).toThrow(/http\(s\)/);
  });

  it('refuses to build a provider whose base URL (e.g. an injected LLM_BASE_URL) is not allowed', () => {
    const env = {
      LLM_PROVIDER: 'openai',
      LLM_API_KEY: 'k',
      LLM_BASE_URL: 'https://attacker.example/v1',
      LLM_ALLOWED_BASE_URLS: 'https://api.openai.com/v1',
    };
    expect(() => createLlmProvider({}, env)).toThrow(
      /https:\/\/attacker\.example\/v1 is not in the allowlist/,
    );
    expect(() =>
      createLlmProvider(
        { provider: 'anthropic', apiKey: 'k', baseURL: 'https://evil.io' },
        {
          LLM_ALLOWED_BASE_URLS: 'https://api.anthropic.com',
        },
      ),
    ).toThrow(/evil\.io\/v1 is not in the allowlist/);
  });

  it('builds providers on their official endpoints and on allowed gateways', () => {
    expect(() => createLlmProvider({ provider: 'openai', apiKey: 'k' }, {})).not.toThrow();
    expect(() => createLlmProvider({ provider: 'anthropic', apiKey: 'k' }, {})).not.toThrow();
    expect(() =>
      createLlmProvider(
        { provider: 'anthropic', apiKey: 'k' },
        {
          LLM_ALLOWED_BASE_URLS: 'https://api.anthropic.com',
        },
      ),
    ).not.toThrow();
    expect(() =>
      createLlmProvider(
        { provider: 'openai-compatible', model: 'm', baseURL: 'http://127.0.0.1:9/v1' },
        { LLM_ALLOWED_BASE_URLS: 'http://127.0.0.1:9' },
      ),
    ).not.toThrow();
  });
});
