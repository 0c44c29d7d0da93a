import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { AppModule } from '../../src/example/app.module';
import type { LoopbackLlmServer, ScriptedReply } from '../client/loopback-llm-server';
import { startOpenAiLoopback } from '../client/loopback-openai-server';
import { demoTestSettings, seedDemo } from '../harness/demo-data';
import { createUser } from '../harness/fixtures';
import { testParseConfig } from '../harness/parse-rest';

const API_KEY = 'demo-chat-operator-key';
type Msg = { role: string; content?: string | null };

function countOrders(body: Record<string, unknown>): ScriptedReply {
  const messages = body.messages as Msg[];
  const tool = messages.find((m) => m.role === 'tool');
  if (!tool) {
    return { toolCalls: [{ id: 'c1', name: 'count_objects', arguments: { class_name: 'Order' } }] };
  }
  // Tool results reach the model wrapped as untrusted data.
  return { text: `Orders: ${JSON.parse(unwrapUntrusted(String(tool.content))).data.count}` };
}

function sseEvents(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)![1];
      const data = JSON.parse(/^data: (.+)$/m.exec(block)![1]) as Record<string, unknown>;
      return { event, data };
    });
}

/** The demo's /chat endpoint: SSE of a conversation for the signed-in user, only with an LLM. */
describe('demo /chat (model: loopback server speaking the OpenAI HTTP API)', () => {
  let llm: LoopbackLlmServer;
  let tokens: { alice: string };
  const apps: INestApplication[] = [];
  const savedProvider = process.env.LLM_PROVIDER;

  async function boot(withLlm: boolean): Promise<INestApplication> {
    const cfg = testParseConfig();
    const settings = demoTestSettings();
    const module = await Test.createTestingModule({
      imports: [
        AppModule.forRoot({
          settings,
          parseServerURL: cfg.serverURL,
          mcpApiKey: API_KEY,
          llm: withLlm
            ? { provider: 'openai', apiKey: 'sk-loopback', baseURL: llm.baseURL, maxRetries: 0 }
            : undefined,
        }),
      ],
    }).compile();
    const app = module.createNestApplication({ logger: false });
    await app.init();
    apps.push(app);
    return app;
  }

  beforeAll(async () => {
    delete process.env.LLM_PROVIDER;
    tokens = await seedDemo();
    llm = await startOpenAiLoopback(countOrders);
  }, 60_000);

  afterAll(async () => {
    if (savedProvider !== undefined) process.env.LLM_PROVIDER = savedProvider;
    for (const app of apps) await app.close();
    await llm?.close();
  });

  it('streams the conversation for the signed-in user, scoped to their tenant', async () => {
    const app = await boot(true);
    const res = await request(app.getHttpServer())
      .post('/chat')
      .set('Authorization', `Bearer ${tokens.alice}`)
      .send({ message: 'How many orders?' })
      .expect(200)
      .expect('Content-Type', /text\/event-stream/);
    const events = sseEvents(res.text);
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['tool_call', 'tool_result', 'text', 'done']),
    );
    expect(events.find((e) => e.event === 'tool_call')!.data).toEqual({
      name: 'count_objects',
      arguments: { class_name: 'Order' },
    });
    const done = events.find((e) => e.event === 'done')!.data;
    // alice's tenant (acme) has 1470 orders; both tenants together have 2940.
    expect(done.text).toBe('Orders: 1470');
    expect(done.tool_calls).toEqual(['count_objects']);
    expect(done.usage).toEqual(expect.objectContaining({ calls: 2 }));
    // The model was told whom it answers: the verified user and tenant, never the token.
    const system = (llm.requests[llm.requests.length - 1].body.messages as Msg[])[0];
    expect(system.role).toBe('system');
    expect(system.content).toMatch(/You act for the Parse user "alice" \(objectId "\w+"\)/);
    expect(system.content).toContain('Tenant: "acme".');
    expect(system.content).not.toContain(tokens.alice);

    const operator = await request(app.getHttpServer())
      .post('/chat')
      .set('X-MCP-API-Key', API_KEY)
      .send({ message: 'How many orders?' })
      .expect(200);
    expect(sseEvents(operator.text).find((e) => e.event === 'done')!.data.text).toBe(
      'Orders: 2940',
    );
  });

  it('refuses unauthenticated callers and malformed bodies before asking the model', async () => {
    const app = await boot(true);
    const before = llm.requests.length;
    await request(app.getHttpServer()).post('/chat').send({ message: 'hi' }).expect(401);
    await request(app.getHttpServer())
      .post('/chat')
      .set('Authorization', 'Bearer r:not-a-session')
      .send({ message: 'hi' })
      .expect(401);
    const bad = await request(app.getHttpServer())
      .post('/chat')
      .set('Authorization', `Bearer ${tokens.alice}`)
      .send({ question: 'hi' })
      .expect(400);
    expect(bad.body.error).toMatch(/"message"/);
    expect(llm.requests.length).toBe(before);
  });

  it('refuses a signed-in user who is in no tenant role, whatever their sign-up claimed', async () => {
    const app = await boot(true);
    const before = llm.requests.length;
    const stranger = await createUser('chat-stranger', 'pw', { tenantId: 'globex' });
    const res = await request(app.getHttpServer())
      .post('/chat')
      .set('Authorization', `Bearer ${stranger.sessionToken}`)
      .send({ message: 'How many orders?' })
      .expect(403);
    expect(res.body.error).toMatch(/No tenant for user chat-stranger: .*no tenant role/);
    expect(llm.requests.length).toBe(before);
  });

  it('has no /chat without an LLM provider', async () => {
    const app = await boot(false);
    await request(app.getHttpServer())
      .post('/chat')
      .set('Authorization', `Bearer ${tokens.alice}`)
      .send({ message: 'hi' })
      .expect(404);
  });
});
