import type { LlmMessage } from '../../ports/llm-provider';
import { toAnthropicMessages } from './anthropic.provider';

describe('toAnthropicMessages', () => {
  it('carries tool results in user turns and merges consecutive turns of one role', () => {
    const history: LlmMessage[] = [
      { role: 'system', content: 'summary' },
      { role: 'user', content: 'q1' },
      {
        role: 'assistant',
        content: 'checking',
        toolCalls: [
          { id: 'a', name: 'count_objects', arguments: { class_name: 'Order' } },
          { id: 'b', name: 'get_schema', arguments: { class_name: 'Order' } },
        ],
      },
      { role: 'tool', toolCallId: 'a', name: 'count_objects', content: '{"success":true}' },
      {
        role: 'tool',
        toolCallId: 'b',
        name: 'get_schema',
        content: '{"success":false}',
        isError: true,
      },
      { role: 'user', content: 'q2' },
    ];
    expect(toAnthropicMessages(history)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'q1' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'checking' },
          { type: 'tool_use', id: 'a', name: 'count_objects', input: { class_name: 'Order' } },
          { type: 'tool_use', id: 'b', name: 'get_schema', input: { class_name: 'Order' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: '{"success":true}' },
          { type: 'tool_result', tool_use_id: 'b', content: '{"success":false}', is_error: true },
          { type: 'text', text: 'q2' },
        ],
      },
    ]);
  });
});
