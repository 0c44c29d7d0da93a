import { unwrapUntrusted } from 'nestjs-parse-agent/core/untrusted-data';
import { ParseAgent, ParseAgentConfigError } from 'nestjs-parse-agent';
import { ParseAgentConversation } from 'nestjs-parse-agent/llm';
import { createAgentServices } from 'nestjs-parse-agent/mcp';
import { CORE_MODELS } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { seedDemo } from '../harness/demo-data';
import { testParseConnection } from '../harness/parse-rest';
import type { LoopbackLlmServer, ScriptedReply } from './loopback-llm-server';
import { startOpenAiLoopback } from './loopback-openai-server';

type Msg = { role: string; content?: string | null };

/** Counts the class the last question names, then reports the tool's count. */
function countModel(body: Record<string, unknown>): ScriptedReply {
  const messages = body.messages as Msg[];
  const lastUser = [...messages].reverse().find((m) => m.role === 'user')!;
  const cls = /customer/i.test(String(lastUser.content)) ? 'Customer' : 'Order';
  const tool = messages.slice(messages.lastIndexOf(lastUser)).find((m) => m.role === 'tool');
  if (!tool) {
    return {
      toolCalls: [{ id: `c_${cls}`, name: 'count_objects', arguments: { class_name: cls } }],
    };
  }
  const envelope = JSON.parse(unwrapUntrusted(String(tool.content))) as {
    data?: { count: number };
  };
  return { text: `${cls}=${envelope.data?.count ?? 'refused'}` };
}

describe('agent.ask and ParseAgentFactory.conversation (model: loopback server speaking the OpenAI HTTP API)', () => {
  let server: LoopbackLlmServer;
  let bed: AgentTestBed;
  let bare: AgentTestBed;
  let tokens: { alice: string };
  const savedProvider = process.env.LLM_PROVIDER;

  beforeAll(async () => {
    delete process.env.LLM_PROVIDER;
    tokens = await seedDemo();
    server = await startOpenAiLoopback(countModel);
    bed = await createAgentTestBed(CORE_MODELS, {
      llm: { provider: 'openai', apiKey: 'sk-loopback', baseURL: server.baseURL, maxRetries: 0 },
    });
    bare = await createAgentTestBed(CORE_MODELS);
  }, 60_000);

  afterAll(async () => {
    if (savedProvider !== undefined) process.env.LLM_PROVIDER = savedProvider;
    await bed?.close();
    await bare?.close();
    await server?.close();
  });

  it('answers with the tools of the agent’s own identity and tenant, and continues with reset: false', async () => {
    const agent = bed.factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
    const first = await agent.ask('How many orders?');
    expect(first.text).toBe('Order=1470');
    expect(first.toolCalls.map((c) => [c.name, c.success])).toEqual([['count_objects', true]]);
    expect(first.usage.totalTokens).toBeGreaterThan(0);

    const before = server.requests.length;
    const second = await agent.ask('And customers?', { reset: false });
    expect(second.text).toMatch(/^Customer=\d+$/);
    const sent = server.requests[before].body.messages as Msg[];
    expect(sent.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'How many orders?',
      'And customers?',
    ]);

    // A fresh question forgets the earlier turns.
    const at = server.requests.length;
    await agent.ask('How many orders?');
    const fresh = server.requests[at].body.messages as Msg[];
    expect(fresh.filter((m) => m.role === 'user')).toHaveLength(1);
  });

  it('refuses new conversation settings on a continued question, saying what to do', async () => {
    const agent = bed.factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
    await expect(agent.ask('x', { reset: false, maxIterations: 2 })).rejects.toThrow(
      /drop maxIterations or start a new conversation/,
    );
  });

  it('gives multi-turn conversations from the factory, bound to the agent options', async () => {
    expect(bed.factory.conversationsEnabled).toBe(true);
    const conversation = bed.factory.conversation({ sessionToken: tokens.alice, tenantId: 'acme' });
    expect(conversation).toBeInstanceOf(ParseAgentConversation);
    const result = await conversation.ask('How many orders?');
    expect(result.text).toBe('Order=1470');
    expect((await result.reply('and customers')).text).toMatch(/^Customer=\d+$/);
    expect(conversation.usage.calls).toBe(4);
  });

  it('without a provider, ask() rejects with a config error that says how to configure one', async () => {
    expect(bare.factory.conversationsEnabled).toBe(false);
    const agent = bare.factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
    const requests = server.requests.length;
    const error = await agent.ask('How many orders?').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ParseAgentConfigError);
    expect((error as Error).message).toMatch(/No LLM provider is configured.*LLM_PROVIDER.*llm/);
    // No request reached any model.
    expect(server.requests.length).toBe(requests);
  });

  it('an agent built on services without a conversation factory explains what is missing', async () => {
    const built = createAgentServices({ parse: testParseConnection(), models: CORE_MODELS });
    try {
      const agent = new ParseAgent({ sessionToken: tokens.alice }, built.services);
      await expect(agent.ask('hi')).rejects.toThrow(/no conversation factory/);
    } finally {
      built.close();
    }
  });
});
