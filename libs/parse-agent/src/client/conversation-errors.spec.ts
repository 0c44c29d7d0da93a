import { LlmProviderError } from './conversation-errors';

describe('LlmProviderError', () => {
  it('keeps short provider text as it is', () => {
    expect(new LlmProviderError('openai', '401 Incorrect API key', 401).message).toBe(
      'openai request failed: 401 Incorrect API key',
    );
  });

  it('caps the provider text at 500 characters and says how much was cut', () => {
    for (const length of [501, 2_000, 100_000]) {
      const text = 'y'.repeat(length);
      const error = new LlmProviderError('openai', text, 500, { cause: new Error(text) });
      expect(error.message).toBe(
        `openai request failed: ${'y'.repeat(500)}… [${length - 500} more characters of the provider's text cut]`,
      );
      // The whole text stays on the cause, for whoever needs it.
      expect((error.cause as Error).message).toHaveLength(length);
    }
  });

  it('never cuts a surrogate pair in two', () => {
    const error = new LlmProviderError('anthropic', 'x'.repeat(499) + '😀'.repeat(10));
    const kept = error.message.slice('anthropic request failed: '.length).split('…')[0];
    expect(kept).toBe('x'.repeat(499));
    expect(error.message).toMatch(/\[20 more characters/);
  });
});
