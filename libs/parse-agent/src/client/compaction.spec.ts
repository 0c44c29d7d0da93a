import {
  compactionRequest,
  renderTranscript,
  shouldAutoCompact,
  summaryMessage,
} from './compaction';
import type { LlmMessage } from '../ports/llm-provider';

const history: LlmMessage[] = [
  { role: 'user', content: 'How many orders?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'c1', name: 'count_objects', arguments: { class_name: 'Order' } }],
  },
  {
    role: 'tool',
    toolCallId: 'c1',
    name: 'count_objects',
    content: '{"success":true,"data":{"count":42}}',
  },
  { role: 'assistant', content: 'There are 42 orders.' },
];

describe('compaction', () => {
  it('writes tool calls and their results out as text, so the summary keeps tool facts', () => {
    const text = renderTranscript(history);
    expect(text).toContain('User: How many orders?');
    expect(text).toContain('count_objects with {"class_name":"Order"}');
    expect(text).toContain('"count":42');
    expect(text).toContain('Assistant: There are 42 orders.');
  });

  it('asks in one user message with no tools', () => {
    const request = compactionRequest(history);
    expect(request.tools).toBeUndefined();
    expect(request.messages).toHaveLength(1);
    expect(request.messages[0].role).toBe('user');
    expect(request.system).toMatch(/counts/);
  });

  it('marks the summary entry as system context', () => {
    expect(summaryMessage('42 orders')).toEqual({
      role: 'system',
      content: expect.stringMatching(/compacted\):\n42 orders$/),
    });
  });

  it('auto-compacts only with a budget, a history, and the budget reached', () => {
    expect(shouldAutoCompact(undefined, 10_000, history)).toBe(false);
    expect(shouldAutoCompact(100, 99, history)).toBe(false);
    expect(shouldAutoCompact(100, 100, history)).toBe(true);
    expect(shouldAutoCompact(100, 500, [])).toBe(false);
    expect(shouldAutoCompact(100, 500, [summaryMessage('x')])).toBe(false);
  });
});
