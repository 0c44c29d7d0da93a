import type {
  Message,
  MessageCreateParamsBase,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages';
import type { LlmMessage, LlmStreamEvent } from '../../ports/llm-provider';
import { AnthropicProvider, toAnthropicMessages } from './anthropic.provider';

/** The provider with its SDK calls answered from canned events: no server, no network. */
class CannedAnthropic extends AnthropicProvider {
  readonly bodies: MessageCreateParamsBase[] = [];

  constructor(
    private readonly events: object[],
    baseURL?: string,
  ) {
    super({ apiKey: 'test', model: 'claude-sonnet-4-5', baseURL });
  }

  get sdkBaseURL(): string {
    return this.client.baseURL;
  }

  protected override async send(body: MessageCreateParamsBase): Promise<Message> {
    this.bodies.push(body);
    throw new Error('not used');
  }

  protected override async sendStreaming(
    body: MessageCreateParamsBase,
  ): Promise<AsyncIterable<RawMessageStreamEvent>> {
    this.bodies.push(body);
    const events = this.events as RawMessageStreamEvent[];
    return (async function* () {
      yield* events;
    })();
  }
}

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

describe('AnthropicProvider (SDK calls answered in-process)', () => {
  const start = (usage: object) => ({
    type: 'message_start',
    message: { model: 'claude-sonnet-4-5-20250929', usage },
  });
  const toolUse = (index: number, id: string, name: string) => ({
    type: 'content_block_start',
    index,
    content_block: { type: 'tool_use', id, name, input: {} },
  });
  const json = (index: number, partial_json: string) => ({
    type: 'content_block_delta',
    index,
    delta: { type: 'input_json_delta', partial_json },
  });

  it('reports each tool call at its block stop, with input assembled from JSON deltas', async () => {
    const provider = new CannedAnthropic([
      start({ input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 1 }),
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Counting.' } },
      // A JSON delta for a block that is not a tool call is not a tool call.
      json(0, '{'),
      { type: 'content_block_stop', index: 0 },
      toolUse(1, 'tu_1', 'count_objects'),
      json(1, '{"class_name":'),
      json(1, '"Order"}'),
      { type: 'content_block_stop', index: 1 },
      toolUse(2, 'tu_2', 'get_schema'),
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } },
    ]);
    const events: LlmStreamEvent[] = [];
    const response = await provider.complete(
      { system: 'be brief', messages: [{ role: 'user', content: 'how many?' }] },
      (e) => events.push(e),
    );
    const call = { id: 'tu_1', name: 'count_objects', arguments: { class_name: 'Order' } };
    expect(events).toEqual([
      { type: 'text', text: 'Counting.' },
      { type: 'tool_call', call },
    ]);
    // The block that never stopped (a cut stream) is not reported as a call.
    expect(response).toEqual({
      text: 'Counting.',
      toolCalls: [call],
      usage: { inputTokens: 100, outputTokens: 30 },
      model: 'claude-sonnet-4-5-20250929',
      stopReason: 'tool_use',
    });
    expect(provider.bodies[0]).toMatchObject({ system: 'be brief', max_tokens: 4096 });
  });

  it('drops a trailing /v1 from the base URL, since the SDK adds it', () => {
    expect(new CannedAnthropic([], 'http://127.0.0.1:9/v1/').sdkBaseURL).toBe('http://127.0.0.1:9');
    expect(new CannedAnthropic([], 'http://127.0.0.1:9').sdkBaseURL).toBe('http://127.0.0.1:9');
  });
});
