import { unwrapUntrusted } from 'nestjs-parse-agent/core/untrusted-data';
import { firstValueFrom, toArray } from 'rxjs';
import { AgentCancelledError } from 'nestjs-parse-agent/core/errors';
import { ParseAgentConversation } from 'nestjs-parse-agent/client/parse-agent-conversation';
import { createLlmProvider } from 'nestjs-parse-agent/client/provider-from-env';
import { startAnthropicLoopback } from './loopback-anthropic-server';
import type { LoopbackLlmServer, ReplyScript, ScriptedReply } from './loopback-llm-server';
import { RecordingAgent } from './recording-agent';

type Msg = { role: string; content: Array<Record<string, unknown>> };

describe('Anthropic provider through the official SDK, against a loopback server speaking the Anthropic Messages HTTP API', () => {
  let server: LoopbackLlmServer | undefined;
  const start = async (script: ReplyScript | ScriptedReply[]) => {
    server = await startAnthropicLoopback(script);
    const provider = createLlmProvider(
      { maxRetries: 0 },
      { LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'sk-ant-loopback', LLM_BASE_URL: server.baseURL },
    );
    return { server, provider };
  };
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const countOrders: ScriptedReply = {
    text: 'Let me count.',
    toolCalls: [
      {
        id: 'toolu_1',
        name: 'count_objects',
        arguments: { class_name: 'Order', where: { status: 'paid' } },
      },
    ],
    usage: { input: 900, output: 40 },
  };

  it('runs the requested tool and returns its envelope as a tool_result block', async () => {
    const { server, provider } = await start([
      countOrders,
      { text: '17 paid orders.', usage: { input: 1000, output: 8 } },
    ]);
    const agent = new RecordingAgent(async () => ({ success: true, data: { count: 17 } }));
    const conversation = new ParseAgentConversation(agent, {
      provider,
      systemPrompt: 'Answer briefly.',
    });
    const result = await conversation.ask('How many paid orders?');

    expect(result.text).toBe('17 paid orders.');
    expect(agent.calls.map((c) => c.args)).toEqual([
      { class_name: 'Order', where: { status: 'paid' } },
    ]);
    const [first, second] = server.requests;
    // SDK versions differ in the header they put the key in (x-api-key, or a bearer token).
    expect(`${first.headers['x-api-key']} ${first.headers.authorization}`).toContain(
      'sk-ant-loopback',
    );
    expect(first.body).toMatchObject({
      model: 'claude-haiku-4-5',
      system: 'Answer briefly.',
      max_tokens: 4096,
      tools: [
        {
          name: 'count_objects',
          description: 'Count the objects of a class',
          input_schema: expect.objectContaining({ type: 'object' }),
        },
      ],
    });
    const messages = second.body.messages as Msg[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1].content).toEqual([
      { type: 'text', text: 'Let me count.' },
      {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'count_objects',
        input: { class_name: 'Order', where: { status: 'paid' } },
      },
    ]);
    expect(messages[2].content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: expect.stringMatching(/^Tool data inside <untrusted-data-[0-9a-f]+>/),
      },
    ]);
    const fed = (messages[2].content as Array<{ content: string }>)[0].content;
    expect(unwrapUntrusted(fed)).toBe('{"success":true,"data":{"count":17}}');
    // claude-haiku-4-5: $1 in, $5 out per million tokens.
    expect(result.usage.costUsd).toBeCloseTo((1900 * 1 + 48 * 5) / 1e6, 12);
  });

  it('streams text and tool input that arrives as JSON deltas (SSE)', async () => {
    const { server, provider } = await start([
      countOrders,
      { text: 'Seventeen paid orders.', usage: { input: 1000, output: 8 } },
    ]);
    const agent = new RecordingAgent(async () => ({ success: true, data: { count: 17 } }));
    const events = await firstValueFrom(
      new ParseAgentConversation(agent, { provider })
        .stream('How many paid orders?')
        .pipe(toArray()),
    );
    expect(server.requests[0].body.stream).toBe(true);
    expect(agent.calls[0].args).toEqual({ class_name: 'Order', where: { status: 'paid' } });
    expect(events.filter((e) => e.type === 'tool_call')).toHaveLength(1);
    const texts = events.flatMap((e) => (e.type === 'text' ? [e.text] : []));
    expect(texts.join('')).toBe('Let me count.Seventeen paid orders.');
    const done = events[events.length - 1];
    if (done.type !== 'done') throw new Error('no done event');
    expect(done.result.usage.inputTokens).toBe(1900);
    expect(done.result.usage.outputTokens).toBe(48);
  });

  it('marks a failing tool’s result as an error for the model', async () => {
    const { server, provider } = await start([countOrders, { text: 'I may not read orders.' }]);
    const agent = new RecordingAgent(async () => ({
      success: false,
      error: 'denied',
      error_code: 'access_denied',
    }));
    const result = await new ParseAgentConversation(agent, { provider }).ask('q');
    expect(result.text).toBe('I may not read orders.');
    expect((server.requests[1].body.messages as Msg[])[2].content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: '{"success":false,"error":"denied","error_code":"access_denied"}',
      is_error: true,
    });
  });

  it('stops after maxIterations model calls', async () => {
    const { server, provider } = await start(() => countOrders);
    const agent = new RecordingAgent(async () => ({ success: true, data: { count: 1 } }));
    const result = await new ParseAgentConversation(agent, { provider, maxIterations: 2 }).ask('q');
    expect(server.requests).toHaveLength(2);
    expect(result.finishReason).toBe('max_iterations');
  });

  it('aborting during the model request closes the HTTP request', async () => {
    const { server, provider } = await start([{ hang: true }]);
    const controller = new AbortController();
    const pending = new ParseAgentConversation(
      new RecordingAgent(async () => ({ success: true, data: null })),
      { provider },
    ).ask('q', { signal: controller.signal });
    const request = await server.requestArrived(1);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AgentCancelledError);
    await request.closedEarly;
  });

  it('sends the compaction summary as system text on the next question', async () => {
    const { server, provider } = await start([
      countOrders,
      { text: '17 paid orders.' },
      { text: 'Earlier: count_objects on paid Order rows returned 17.' },
      { text: 'Still 17.' },
    ]);
    const agent = new RecordingAgent(async () => ({ success: true, data: { count: 17 } }));
    const conversation = new ParseAgentConversation(agent, { provider, systemPrompt: 'Be brief.' });
    await conversation.ask('How many paid orders?');
    await conversation.compact();
    await conversation.reply('And now?');
    const last = server.requests[3].body;
    expect(last.system).toBe(
      'Be brief.\n\nSummary of the earlier conversation (compacted):\nEarlier: count_objects on paid Order rows returned 17.',
    );
    expect((last.messages as Msg[]).map((m) => m.role)).toEqual(['user']);
  });
});
