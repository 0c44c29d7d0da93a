import { unwrapUntrusted } from 'nestjs-parse-agent/core/untrusted-data';
import type { ParseAgent } from 'nestjs-parse-agent';
import { ParseAgentConversation } from 'nestjs-parse-agent/client/parse-agent-conversation';
import { createLlmProvider } from 'nestjs-parse-agent/client/provider-from-env';
import { CORE_MODELS } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { seedDemo } from '../harness/demo-data';
import { parseRest } from '../harness/parse-rest';
import type { LoopbackLlmServer, ScriptedReply } from './loopback-llm-server';
import { startOpenAiLoopback } from './loopback-openai-server';

type Msg = Record<string, unknown>;

/** The model asks for count_objects on Order, then answers with the count it was given. */
function countThenAnswer(body: Record<string, unknown>): ScriptedReply {
  const tool = (body.messages as Msg[]).find((m) => m.role === 'tool');
  if (!tool) {
    return {
      toolCalls: [{ id: 'call_count', name: 'count_objects', arguments: { class_name: 'Order' } }],
    };
  }
  const envelope = JSON.parse(unwrapUntrusted(String(tool.content))) as {
    success: boolean;
    data?: { count: number };
  };
  return {
    text: envelope.success ? `COUNT=${envelope.data!.count}` : `FAILED ${String(tool.content)}`,
  };
}

describe('a conversation with a real ParseAgent on the real Parse Server (model: loopback server speaking the OpenAI HTTP API)', () => {
  let bed: AgentTestBed;
  let tokens: { alice: string };
  let server: LoopbackLlmServer;

  beforeAll(async () => {
    tokens = await seedDemo();
    bed = await createAgentTestBed(CORE_MODELS);
    server = await startOpenAiLoopback(countThenAnswer);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await bed?.close();
  });

  const conversationFor = (agent: ParseAgent) =>
    new ParseAgentConversation(agent, {
      provider: createLlmProvider({
        provider: 'openai',
        apiKey: 'sk-loopback',
        baseURL: server.baseURL,
        maxRetries: 0,
      }),
    });

  it('offers the agent’s allowed tools and feeds the real count back to the model', async () => {
    const master = bed.factory.create();
    // Oracle: Parse's own master-key count under Order's canonical filter (soft-deleted rows left out).
    const expected = await parseRest<{ count: number }>(
      'GET',
      `/classes/Order?count=1&limit=0&where=${encodeURIComponent(JSON.stringify({ isDeleted: { $ne: true } }))}`,
      undefined,
      { masterKey: true },
    );
    const before = server.requests.length;
    const result = await conversationFor(master).ask('How many orders are there?');

    const offered = (
      server.requests[before].body.tools as Array<{ function: { name: string } }>
    ).map((t) => t.function.name);
    expect(offered).toEqual(master.allowedTools());
    expect(result.toolCalls).toEqual([
      expect.objectContaining({
        name: 'count_objects',
        arguments: { class_name: 'Order' },
        success: true,
      }),
    ]);
    expect(result.text).toBe(`COUNT=${expected.count}`);
    expect(expected.count).toBeGreaterThan(0);
  });

  it('runs the tools with the agent’s identity: a tenant user’s model sees only its tenant’s rows', async () => {
    const alice = bed.factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
    const result = await conversationFor(alice).ask('How many orders are there?');
    expect(result.text).toBe('COUNT=1470');
  });
});
