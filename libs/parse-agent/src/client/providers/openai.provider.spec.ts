import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
} from 'openai/resources/chat/completions';
import type { LlmRequest, LlmStreamEvent } from '../../ports/llm-provider';
import { OpenAiProvider, toOpenAiMessages, type OpenAiProviderOptions } from './openai.provider';

/** The provider with its two SDK calls answered from canned data: no server, no network. */
class CannedOpenAi extends OpenAiProvider {
  readonly bodies: ChatCompletionCreateParamsBase[] = [];

  constructor(
    options: Partial<OpenAiProviderOptions>,
    private readonly chunks: ChatCompletionChunk[] = [],
    private readonly completion?: ChatCompletion,
  ) {
    super({ apiKey: 'test', model: 'gpt-4o-mini', ...options });
  }

  protected override async send(body: ChatCompletionCreateParamsBase): Promise<ChatCompletion> {
    this.bodies.push(body);
    return this.completion!;
  }

  protected override async sendStreaming(
    body: ChatCompletionCreateParamsBase,
  ): Promise<AsyncIterable<ChatCompletionChunk>> {
    this.bodies.push(body);
    const chunks = this.chunks;
    return (async function* () {
      yield* chunks;
    })();
  }
}

function chunk(
  delta: ChatCompletionChunk.Choice.Delta,
  extra: Partial<ChatCompletionChunk> & {
    finish?: ChatCompletionChunk.Choice['finish_reason'];
  } = {},
): ChatCompletionChunk {
  const { finish, ...rest } = extra;
  return {
    id: 'x',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, delta, finish_reason: finish ?? null }],
    ...rest,
  };
}

const ask: LlmRequest = { system: 'be brief', messages: [{ role: 'user', content: 'how many?' }] };

describe('OpenAiProvider (SDK calls answered in-process)', () => {
  it('caps output with max_completion_tokens for OpenAI and max_tokens for a compatible server', async () => {
    const reply: ChatCompletion = {
      id: 'x',
      object: 'chat.completion',
      created: 0,
      model: '',
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          logprobs: null,
          message: { role: 'assistant', content: 'ok', refusal: null },
        },
      ],
    };
    const openai = new CannedOpenAi({}, [], reply);
    const local = new CannedOpenAi({ name: 'openai-compatible', model: 'qwen' }, [], reply);
    await openai.complete({ ...ask, maxTokens: 50 });
    await local.complete({ ...ask, maxTokens: 50 });
    expect(openai.bodies[0]).toMatchObject({ max_completion_tokens: 50 });
    expect(openai.bodies[0]).not.toHaveProperty('max_tokens');
    expect(local.bodies[0]).toMatchObject({ max_tokens: 50 });
    expect(local.bodies[0]).not.toHaveProperty('max_completion_tokens');
    expect(openai.bodies[0]).not.toHaveProperty('tools');
    // An answer naming no model is reported under the requested one.
    expect((await openai.complete(ask)).model).toBe('gpt-4o-mini');
    expect((await openai.complete(ask)).usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('assembles interleaved tool-call pieces by index and reports each call once the stream ends', async () => {
    const provider = new CannedOpenAi({}, [
      chunk({ content: 'Let me ' }),
      chunk({ content: 'count.' }),
      chunk({
        tool_calls: [
          { index: 1, id: 'call_b', function: { name: 'get_schema', arguments: '' } },
          { index: 0, id: 'call_a', function: { name: 'count_objects', arguments: '{"class' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"class_name":"User"}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '_name":"Order"}' } }] }),
      chunk({}, { finish: 'tool_calls' }),
      {
        ...chunk({}),
        choices: [],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      },
    ]);
    const events: LlmStreamEvent[] = [];
    const response = await provider.complete(ask, (e) => events.push(e));

    const calls = [
      { id: 'call_a', name: 'count_objects', arguments: { class_name: 'Order' } },
      { id: 'call_b', name: 'get_schema', arguments: { class_name: 'User' } },
    ];
    expect(events).toEqual([
      { type: 'text', text: 'Let me ' },
      { type: 'text', text: 'count.' },
      { type: 'tool_call', call: calls[0] },
      { type: 'tool_call', call: calls[1] },
    ]);
    expect(response).toEqual({
      text: 'Let me count.',
      toolCalls: calls,
      usage: { inputTokens: 11, outputTokens: 7 },
      model: 'gpt-4o-mini-2024-07-18',
      stopReason: 'tool_calls',
    });
  });

  it('marks streamed arguments that are not a JSON object instead of running the tool with a guess', async () => {
    const provider = new CannedOpenAi({}, [
      chunk({
        tool_calls: [{ index: 0, function: { name: 'query_class', arguments: '{"where":' } }],
      }),
    ]);
    const response = await provider.complete(ask, () => undefined);
    expect(response.toolCalls).toEqual([
      {
        id: 'call_0',
        name: 'query_class',
        arguments: {},
        invalidArguments: 'arguments are not valid JSON',
      },
    ]);
  });
});

describe('toOpenAiMessages', () => {
  it('puts the system prompt first and sends tool calls as JSON text with null content', () => {
    expect(
      toOpenAiMessages({
        system: 'sys',
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'a', name: 'count_objects', arguments: { class_name: 'Order' } }],
          },
          { role: 'tool', toolCallId: 'a', name: 'count_objects', content: '{"success":true}' },
        ],
      }),
    ).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'a',
            type: 'function',
            function: { name: 'count_objects', arguments: '{"class_name":"Order"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: '{"success":true}' },
    ]);
  });
});
