import { firstValueFrom, toArray } from 'rxjs';
import type { ToolEnvelope } from '../core/envelope';
import { AgentCancelledError, AgentUnauthorizedError, ParseAgentConfigError } from '../core/errors';
import type {
  LlmProvider,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  LlmToolCall,
} from '../ports/llm-provider';
import type { ConversationAgent } from '../ports/conversation';
import { ConversationBusyError, LlmProviderError } from './conversation-errors';
import { ParseAgentConversation } from './parse-agent-conversation';
import { unwrapUntrusted } from '../core/untrusted-data';

type Turn = { text?: string; calls?: LlmToolCall[]; input?: number; output?: number };

/** A provider that plays back turns and records each request. */
class ScriptedProvider implements LlmProvider {
  readonly name = 'scripted';
  readonly requests: LlmRequest[] = [];
  constructor(
    protected turns: Array<Turn | ((r: LlmRequest) => Turn | Promise<Turn>)>,
    readonly model = 'gpt-4o-mini',
  ) {}
  async complete(request: LlmRequest, onEvent?: (e: LlmStreamEvent) => void): Promise<LlmResponse> {
    this.requests.push(structuredClone({ ...request, signal: undefined }));
    const next = this.turns.shift();
    if (!next) throw new Error('script exhausted');
    const turn = typeof next === 'function' ? await next(request) : next;
    if (onEvent && turn.text)
      for (const ch of turn.text.split(' ')) onEvent({ type: 'text', text: ch });
    return {
      text: turn.text ?? '',
      toolCalls: turn.calls ?? [],
      usage: { inputTokens: turn.input ?? 100, outputTokens: turn.output ?? 10 },
      model: this.model,
    };
  }
}

class FakeAgent implements ConversationAgent {
  readonly calls: Array<{ name: string; args: Record<string, unknown>; signal?: AbortSignal }> = [];
  constructor(
    protected handler: (
      name: string,
      args: Record<string, unknown>,
      signal?: AbortSignal,
    ) => Promise<ToolEnvelope> = async (name, args) => ({ success: true, data: { name, args } }),
  ) {}
  toolDefinitions() {
    return [
      {
        name: 'count_objects',
        description: 'Count rows',
        inputSchema: { type: 'object', properties: { class_name: { type: 'string' } } },
        handler: () => 'must not reach the model',
      },
    ];
  }
  execute(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal } = {}) {
    this.calls.push({ name, args, signal: options.signal });
    return this.handler(name, args, options.signal);
  }
}

const call = (
  id: string,
  args: Record<string, unknown> = { class_name: 'Order' },
): LlmToolCall => ({
  id,
  name: 'count_objects',
  arguments: args,
});

describe('ParseAgentConversation (scripted provider, fake agent)', () => {
  it('runs requested tools with their arguments and feeds the envelopes back', async () => {
    const provider = new ScriptedProvider([
      { calls: [call('c1')] },
      { text: 'There are 42 orders.' },
    ]);
    const agent = new FakeAgent(async () => ({ success: true, data: { count: 42 } }));
    const conversation = new ParseAgentConversation(agent, { provider, systemPrompt: 'Be brief.' });
    const result = await conversation.ask('How many orders?');

    expect(agent.calls.map((c) => [c.name, c.args])).toEqual([
      ['count_objects', { class_name: 'Order' }],
    ]);
    expect(result.text).toBe('There are 42 orders.');
    expect(result.finishReason).toBe('completed');
    expect(result.iterations).toBe(2);
    expect(result.toolCalls).toEqual([
      expect.objectContaining({
        id: 'c1',
        name: 'count_objects',
        success: true,
        arguments: { class_name: 'Order' },
      }),
    ]);
    expect(result.toolCalls[0].durationMs).toBeGreaterThanOrEqual(0);
    // Only the MCP fields travel to the model.
    expect(provider.requests[0].tools).toEqual([
      { name: 'count_objects', description: 'Count rows', inputSchema: expect.any(Object) },
    ]);
    expect(provider.requests[0].system).toBe('Be brief.');
    // The result carries stored data: the model gets it marked as untrusted, as MCP clients do.
    const fed = provider.requests[1].messages[2] as { content: string };
    expect(fed).toEqual({
      role: 'tool',
      toolCallId: 'c1',
      name: 'count_objects',
      content: expect.stringMatching(/^Tool data inside <untrusted-data-[0-9a-f]+>/),
    });
    expect(unwrapUntrusted(fed.content)).toBe('{"success":true,"data":{"count":42}}');
    expect(result.transcript[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(result.transcript).toHaveLength(5);
  });

  it('gives a failing tool’s envelope, or a thrown error, back to the model instead of throwing', async () => {
    const provider = new ScriptedProvider([
      { calls: [call('c1', { class_name: 'Secret' }), call('c2')] },
      { text: 'I cannot see Secret.' },
    ]);
    const agent = new FakeAgent(async (_n, args) => {
      if (args.class_name === 'Secret') {
        return { success: false, error: 'hidden', error_code: 'access_denied' };
      }
      throw new Error('db password is hunter2');
    });
    const result = await new ParseAgentConversation(agent, { provider }).ask('q');
    expect(result.text).toBe('I cannot see Secret.');
    expect(result.toolCalls.map((c) => c.success)).toEqual([false, false]);
    const toolMessages = provider.requests[1].messages.filter((m) => m.role === 'tool');
    expect(toolMessages[0]).toMatchObject({
      isError: true,
      content: expect.stringContaining('access_denied'),
    });
    expect(toolMessages[1].content).toContain('internal_error');
    expect(toolMessages[1].content).not.toContain('hunter2');
  });

  it('does not run a call whose arguments are not a JSON object, and tells the model why', async () => {
    const provider = new ScriptedProvider([
      {
        calls: [
          {
            id: 'bad',
            name: 'count_objects',
            arguments: {},
            invalidArguments: 'arguments are not valid JSON',
          },
        ],
      },
      { text: 'sorry' },
    ]);
    const agent = new FakeAgent();
    const result = await new ParseAgentConversation(agent, { provider }).ask('q');
    expect(agent.calls).toHaveLength(0);
    expect(result.toolCalls[0].result).toMatchObject({
      success: false,
      error_code: 'invalid_argument',
    });
  });

  it('lets an unauthorized identity end the conversation', async () => {
    const provider = new ScriptedProvider([{ calls: [call('c1')] }]);
    const agent = new FakeAgent(async () => {
      throw new AgentUnauthorizedError('session expired');
    });
    await expect(new ParseAgentConversation(agent, { provider }).ask('q')).rejects.toBeInstanceOf(
      AgentUnauthorizedError,
    );
  });

  it('stops at maxIterations, says so, and leaves a history a follow-up can use', async () => {
    const provider = new ScriptedProvider([
      { text: 'one', calls: [call('a')] },
      { text: 'two', calls: [call('b')] },
      { text: 'three', calls: [call('c')] },
      { text: 'done now' },
    ]);
    const agent = new FakeAgent();
    const conversation = new ParseAgentConversation(agent, { provider, maxIterations: 3 });
    const result = await conversation.ask('loop');
    expect(result.finishReason).toBe('max_iterations');
    expect(result.reachedMaxIterations).toBe(true);
    expect(result.iterations).toBe(3);
    expect(result.text).toBe('three');
    expect(agent.calls).toHaveLength(2); // the third round's call is not run
    const last = conversation.history[conversation.history.length - 1];
    expect(last).toMatchObject({
      role: 'tool',
      toolCallId: 'c',
      content: expect.stringContaining('max_iterations'),
    });
    const next = await result.reply('and?');
    expect(next.text).toBe('done now');
  });

  it('defaults to 8 iterations and refuses a bad cap', () => {
    const provider = new ScriptedProvider([]);
    expect(new ParseAgentConversation(new FakeAgent(), { provider }).maxIterations).toBe(8);
    expect(
      () => new ParseAgentConversation(new FakeAgent(), { provider, maxIterations: 0 }),
    ).toThrow(ParseAgentConfigError);
  });

  it('keeps history across reply, starts over on ask, and reset clears it', async () => {
    const provider = new ScriptedProvider([{ text: 'a1' }, { text: 'a2' }, { text: 'a3' }]);
    const conversation = new ParseAgentConversation(new FakeAgent(), { provider });
    const first = await conversation.ask('q1');
    await first.reply('q2');
    expect(provider.requests[1].messages.map((m) => m.content)).toEqual(['q1', 'a1', 'q2']);
    expect(conversation.history).toHaveLength(4);
    conversation.history.pop(); // a copy
    expect(conversation.history).toHaveLength(4);
    await conversation.ask('q3');
    expect(provider.requests[2].messages.map((m) => m.content)).toEqual(['q3']);
    conversation.reset();
    expect(conversation.history).toEqual([]);
  });

  it('adds up usage per question and per session, with cost from the price table', async () => {
    const provider = new ScriptedProvider([
      { calls: [call('c1')], input: 1000, output: 100 },
      { text: 'x', input: 2000, output: 200 },
      { text: 'y', input: 500, output: 50 },
    ]);
    const conversation = new ParseAgentConversation(new FakeAgent(), {
      provider,
      pricing: { 'gpt-4o-mini': { input: 1, output: 10 } },
    });
    const r1 = await conversation.ask('q');
    expect(r1.usage.inputTokens).toBe(3000);
    expect(r1.usage.outputTokens).toBe(300);
    expect(r1.usage.calls).toBe(2);
    expect(r1.usage.costUsd).toBeCloseTo((3000 * 1 + 300 * 10) / 1e6, 12);
    const r2 = await r1.reply('q2');
    expect(conversation.lastUsage).toBe(r2.usage);
    expect(conversation.usage.totalTokens).toBe(3850);
    expect(conversation.usage.costUsd).toBeCloseTo((3500 + 3500) / 1e6, 12);
  });

  it('reports cost as null for a model without a price', async () => {
    const provider = new ScriptedProvider([{ text: 'x' }], 'my-local-model');
    const conversation = new ParseAgentConversation(new FakeAgent(), { provider });
    const result = await conversation.ask('q');
    expect(result.usage.costUsd).toBeNull();
    conversation.pricing = { 'my-local-model': { input: 0, output: 0 } };
    expect(conversation.pricing['gpt-4o-mini']).toBeDefined();
  });

  it('compacts the history into one summary turn and counts the call', async () => {
    const provider = new ScriptedProvider([
      { calls: [call('c1')] },
      { text: '42 orders' },
      {
        text: 'User asked about orders; count_objects found 42 Order rows.',
        input: 300,
        output: 30,
      },
      { text: 'still 42' },
    ]);
    const conversation = new ParseAgentConversation(new FakeAgent(), { provider });
    await conversation.ask('How many orders?');
    const before = conversation.usage.calls;
    const summary = await conversation.compact();
    expect(summary).toContain('42 Order rows');
    expect(conversation.history).toEqual([
      { role: 'system', content: expect.stringContaining(summary) },
    ]);
    expect(provider.requests[2].tools).toBeUndefined();
    expect(provider.requests[2].messages[0].content).toContain('"class_name":"Order"');
    expect(conversation.usage.calls).toBe(before + 1);
    await conversation.reply('Still?');
    expect(provider.requests[3].messages[0].content).toContain('42 Order rows');
    expect(await new ParseAgentConversation(new FakeAgent(), { provider }).compact()).toBe('');
  });

  it('compacts automatically before a follow-up once the token budget is spent', async () => {
    const provider = new ScriptedProvider([
      { text: 'a1', input: 400, output: 100 },
      { text: 'summary of a1', input: 50, output: 10 },
      { text: 'a2', input: 100, output: 10 },
      { text: 'a3', input: 100, output: 10 },
    ]);
    const conversation = new ParseAgentConversation(new FakeAgent(), {
      provider,
      autoCompactAt: 500,
    });
    const events = await firstValueFrom(conversation.stream('q1').pipe(toArray()));
    expect(events.some((e) => e.type === 'compacted')).toBe(false);
    const stream = await firstValueFrom(
      conversation.stream('q2', { reset: false }).pipe(toArray()),
    );
    expect(stream[0]).toMatchObject({ type: 'compacted', summary: 'summary of a1' });
    expect(provider.requests[2].messages.map((m) => m.role)).toEqual(['system', 'user']);
    // Below the budget again: no compaction before the third question.
    await conversation.reply('q3');
    expect(provider.requests).toHaveLength(4);
  });

  it('streams text, tool calls, results, usage and the result as an Observable', async () => {
    const provider = new ScriptedProvider([{ calls: [call('c1')] }, { text: 'forty two' }]);
    const conversation = new ParseAgentConversation(new FakeAgent(), { provider });
    const events = await firstValueFrom(conversation.stream('q').pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual([
      'model_usage',
      'tool_call',
      'tool_result',
      'text',
      'text',
      'model_usage',
      'done',
    ]);
    const done = events[events.length - 1];
    expect(done.type === 'done' && done.result.text).toBe('forty two');
  });

  it('reads the same events with for await, and breaking out cancels the question', async () => {
    let toolSignal: AbortSignal | undefined;
    const provider = new ScriptedProvider([{ calls: [call('c1')] }, { text: 'never' }]);
    const agent = new FakeAgent(
      (_n, _a, signal) =>
        new Promise((_resolve, reject) => {
          toolSignal = signal;
          signal?.addEventListener('abort', () => reject(new AgentCancelledError('stop')));
        }),
    );
    const conversation = new ParseAgentConversation(agent, { provider });
    const seen: string[] = [];
    for await (const event of conversation.events('q')) {
      seen.push(event.type);
      if (event.type === 'tool_call') break;
    }
    expect(seen).toEqual(['model_usage', 'tool_call']);
    expect(toolSignal?.aborted).toBe(true);
    expect(provider.requests).toHaveLength(1);
  });

  it('cancels a running tool through the signal, rejects, and keeps the old history', async () => {
    const provider = new ScriptedProvider([{ text: 'a1' }, { calls: [call('c1')] }]);
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    // A tool that ignores its signal still cannot hold the conversation.
    const agent = new FakeAgent((_n, _a, signal) => {
      toolSignal = signal;
      setTimeout(() => controller.abort(), 10);
      return new Promise(() => undefined);
    });
    const conversation = new ParseAgentConversation(agent, { provider });
    await conversation.ask('q1');
    await expect(conversation.reply('q2', { signal: controller.signal })).rejects.toBeInstanceOf(
      AgentCancelledError,
    );
    expect(toolSignal?.aborted).toBe(true);
    expect(conversation.history.map((m) => m.content)).toEqual(['q1', 'a1']);
  });

  it('cancels a pending model request', async () => {
    const controller = new AbortController();
    let providerSignal: AbortSignal | undefined;
    const provider = new ScriptedProvider([
      (request) => {
        providerSignal = request.signal;
        setTimeout(() => controller.abort(), 10);
        return new Promise(() => undefined);
      },
    ]);
    const conversation = new ParseAgentConversation(new FakeAgent(), { provider });
    await expect(conversation.ask('q', { signal: controller.signal })).rejects.toThrow(/Cancelled/);
    expect(providerSignal?.aborted).toBe(true);
    await expect(conversation.ask('q', { signal: controller.signal })).rejects.toBeInstanceOf(
      AgentCancelledError,
    );
  });

  it('wraps provider failures and refuses a second question while one runs', async () => {
    let release!: () => void;
    const provider = new ScriptedProvider([
      () => new Promise<Turn>((resolve) => (release = () => resolve({ text: 'ok' }))),
      () => {
        throw Object.assign(new Error('invalid api key'), { status: 401 });
      },
    ]);
    const conversation = new ParseAgentConversation(new FakeAgent(), { provider });
    const first = conversation.ask('q1');
    await expect(conversation.ask('q2')).rejects.toBeInstanceOf(ConversationBusyError);
    release();
    await first;
    const failure = await conversation.ask('q3').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LlmProviderError);
    expect(failure).toMatchObject({
      status: 401,
      message: 'scripted request failed: invalid api key',
    });
  });
});

describe('the agent hears of each model response and failure (its hooks run on them)', () => {
  class ListeningAgent extends FakeAgent {
    readonly responses: Array<{ iteration: number; toolCalls: string[]; text: string }> = [];
    readonly failures: Error[] = [];
    llmResponded(r: { iteration: number; toolCalls: Array<{ name: string }>; text: string }) {
      this.responses.push({
        iteration: r.iteration,
        toolCalls: r.toolCalls.map((c) => c.name),
        text: r.text,
      });
    }
    llmFailed(error: Error) {
      this.failures.push(error);
    }
  }

  it('reports every response of a question, tool rounds included, and no failure', async () => {
    const agent = new ListeningAgent();
    const provider = new ScriptedProvider([{ calls: [call('c1')] }, { text: 'Forty.' }]);
    await new ParseAgentConversation(agent, { provider }).ask('How many?');
    expect(agent.responses).toEqual([
      { iteration: 1, toolCalls: ['count_objects'], text: '' },
      { iteration: 2, toolCalls: [], text: 'Forty.' },
    ]);
    expect(agent.failures).toEqual([]);
  });

  it('reports a failed model request as the LlmProviderError the question rejects with', async () => {
    const agent = new ListeningAgent();
    const provider = new ScriptedProvider([]);
    const asked = new ParseAgentConversation(agent, { provider }).ask('How many?');
    await expect(asked).rejects.toBeInstanceOf(LlmProviderError);
    expect(agent.failures).toHaveLength(1);
    expect(agent.failures[0]).toBeInstanceOf(LlmProviderError);
    expect(agent.failures[0].message).toContain('script exhausted');
    expect(agent.responses).toEqual([]);
  });
});
