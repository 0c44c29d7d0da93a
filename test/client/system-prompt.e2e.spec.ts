import { unwrapUntrusted } from 'nestjs-parse-agent/core/untrusted-data';
import { PARSE_CONVENTIONS } from 'nestjs-parse-agent/mcp/parse-conventions';
import { CORE_MODELS } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { seedDemo } from '../harness/demo-data';
import { parseRest } from '../harness/parse-rest';
import type { LoopbackLlmServer, ScriptedReply } from './loopback-llm-server';
import { startOpenAiLoopback } from './loopback-openai-server';

type Msg = { role: string; content?: string | null };

/** Counts orders with count_objects, then answers with the count the real Parse Server gave. */
function countOrders(body: Record<string, unknown>): ScriptedReply {
  const messages = body.messages as Msg[];
  const tool = messages.find((m) => m.role === 'tool');
  if (!tool) {
    return {
      toolCalls: [{ id: 'c_order', name: 'count_objects', arguments: { class_name: 'Order' } }],
    };
  }
  const envelope = JSON.parse(unwrapUntrusted(String(tool.content))) as {
    data?: { count: number };
  };
  return { text: `Order=${envelope.data?.count ?? 'refused'}` };
}

describe('the system prompt a conversation sends (real Parse Server; model: loopback server speaking the OpenAI HTTP API)', () => {
  let server: LoopbackLlmServer;
  let bed: AgentTestBed;
  let tokens: { alice: string; bob: string };
  let alice: { objectId: string; username: string; sessionToken?: string };
  const savedProvider = process.env.LLM_PROVIDER;

  beforeAll(async () => {
    delete process.env.LLM_PROVIDER;
    tokens = await seedDemo();
    alice = await parseRest<{ objectId: string; username: string; sessionToken?: string }>(
      'GET',
      '/users/me',
      undefined,
      {
        sessionToken: tokens.alice,
      },
    );
    server = await startOpenAiLoopback(countOrders);
    bed = await createAgentTestBed(CORE_MODELS, {
      llm: { provider: 'openai', apiKey: 'sk-loopback', baseURL: server.baseURL, maxRetries: 0 },
    });
  }, 60_000);

  afterAll(async () => {
    if (savedProvider !== undefined) process.env.LLM_PROVIDER = savedProvider;
    await bed?.close();
    await server?.close();
  });

  /** The system messages of every model request made since `from`. */
  const systemMessagesSince = (from: number): string[] =>
    server.requests.slice(from).map((request) => {
      const messages = request.body.messages as Msg[];
      expect(messages[0].role).toBe('system');
      // Exactly one system message: the prompt, never a second copy.
      expect(messages.filter((m) => m.role === 'system')).toHaveLength(1);
      return String(messages[0].content);
    });

  it('tells the model, on every call of a question, whom it acts for: the user, the tier and the tenant, never the token', async () => {
    const agent = bed.factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
    const before = server.requests.length;
    // The user row /users/me answered, passed as is: it carries the session token too.
    const answer = await agent.ask('How many orders?', { user: alice });
    // The tools still ran on the real server as alice.
    expect(answer.toolCalls.map((c) => [c.name, c.success])).toEqual([['count_objects', true]]);
    expect(answer.text).toMatch(/^Order=\d+$/);

    const prompts = systemMessagesSince(before);
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toBe(prompts[0]);
    const prompt = prompts[0];
    expect(prompt).toContain(
      `You act for the Parse user "alice" (objectId "${alice.objectId}"), through their own session.`,
    );
    expect(prompt).toContain('Permission tier: readonly. You can read data but not change it.');
    expect(prompt).toContain('Tenant: "acme".');
    expect(prompt).toMatch(/- Classes: [^\n]*\bOrder\b/);
    expect(prompt).toContain(PARSE_CONVENTIONS);
    // No credential and no operator posture; no tool this agent is not offered (no direct path
    // here, so a session agent has no group_by).
    expect(alice.sessionToken).toBe(tokens.alice);
    expect(prompt).not.toContain(tokens.alice);
    expect(prompt).not.toContain(tokens.alice.slice(2, 12));
    expect(prompt).not.toMatch(/master key/i);
    expect(bed.factory.create({ sessionToken: tokens.alice }).allowedTools()).not.toContain(
      'group_by',
    );
    expect(prompt).not.toContain('group_by');
    expect(answer.transcript[0]).toEqual({ role: 'system', content: prompt });
  });

  it('tells the operator’s model it reads with the master key, bound to no tenant', async () => {
    const before = server.requests.length;
    await bed.factory.create().ask('How many orders?');
    const [prompt] = systemMessagesSince(before);
    expect(prompt).toContain('You act for the operator of the application, with its master key');
    expect(prompt).not.toMatch(/Tenant:/);
    expect(prompt).not.toMatch(/"alice"/);
    expect(prompt).toContain(PARSE_CONVENTIONS);
  });

  it('sends systemPrompt instead of the default, with systemPromptSuffix after it', async () => {
    const agent = bed.factory.create({ sessionToken: tokens.bob, tenantId: 'globex' });
    let before = server.requests.length;
    await agent.ask('How many orders?', { systemPrompt: 'You are the Globex data desk.' });
    expect(systemMessagesSince(before)).toEqual([
      'You are the Globex data desk.',
      'You are the Globex data desk.',
    ]);

    before = server.requests.length;
    await agent.ask('How many orders?', {
      systemPrompt: 'You are the Globex data desk.',
      systemPromptSuffix: 'Amounts are in EUR.',
    });
    expect(systemMessagesSince(before)[0]).toBe(
      'You are the Globex data desk.\n\nAmounts are in EUR.',
    );
  });

  it('appends systemPromptSuffix to the default in a kept conversation, the same for every turn', async () => {
    const conversation = bed.factory.conversation(
      { sessionToken: tokens.alice, tenantId: 'acme' },
      { systemPromptSuffix: 'House rule: answer in one line.' },
    );
    const before = server.requests.length;
    const first = await conversation.ask('How many orders?');
    await first.reply('And now?');
    const prompts = systemMessagesSince(before);
    expect(prompts).toHaveLength(3);
    expect(new Set(prompts).size).toBe(1);
    expect(prompts[0]).toMatch(
      /^You answer questions about the data of a Parse Server application/,
    );
    expect(prompts[0].endsWith(`${PARSE_CONVENTIONS}\n\nHouse rule: answer in one line.`)).toBe(
      true,
    );
    // Without `user` the model still learns it acts for one signed-in user, never who by token.
    expect(prompts[0]).toContain(
      'You act for one signed-in Parse user, through their own session.',
    );
    expect(prompts[0]).not.toContain(tokens.alice);
  });
});
