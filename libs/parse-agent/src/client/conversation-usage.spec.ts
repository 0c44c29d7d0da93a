import { ConversationUsage } from './conversation-usage';

describe('ConversationUsage', () => {
  it('adds tokens, calls and cost', () => {
    const a = ConversationUsage.ofCall({ inputTokens: 100, outputTokens: 20 }, 0.001);
    const b = ConversationUsage.ofCall({ inputTokens: 50, outputTokens: 5 }, 0.0005);
    const sum = ConversationUsage.empty.plus(a).plus(b);
    expect(sum.inputTokens).toBe(150);
    expect(sum.outputTokens).toBe(25);
    expect(sum.totalTokens).toBe(175);
    expect(sum.calls).toBe(2);
    expect(sum.costUsd).toBeCloseTo(0.0015, 12);
    expect(sum.toString()).toBe('150 in + 25 out = 175 tokens $0.001500');
  });

  it('keeps the cost unknown once any call had no known price', () => {
    const known = ConversationUsage.ofCall({ inputTokens: 1, outputTokens: 1 }, 0.5);
    const unknown = ConversationUsage.ofCall({ inputTokens: 1, outputTokens: 1 }, null);
    expect(known.plus(unknown).costUsd).toBeNull();
    expect(unknown.plus(known).costUsd).toBeNull();
    expect(known.plus(unknown).toString()).toBe('2 in + 2 out = 4 tokens (cost unknown)');
  });

  it('serializes with snake_case keys', () => {
    expect(
      JSON.parse(
        JSON.stringify(ConversationUsage.ofCall({ inputTokens: 3, outputTokens: 4 }, null)),
      ),
    ).toEqual({ input_tokens: 3, output_tokens: 4, total_tokens: 7, cost_usd: null, calls: 1 });
  });
});
