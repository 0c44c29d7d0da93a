import type { SecurityEvent, ToolCallEvent } from 'nestjs-parse-agent';
import type { LlmResponseInfo } from 'nestjs-parse-agent/llm';
import {
  routeSecurityBanners,
  type ToolCallInfo,
  type ToolCallOutcome,
} from 'nestjs-parse-agent/ops';
import { CORE_MODELS } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { seedDemo } from '../harness/demo-data';
import type { LoopbackLlmServer, ScriptedReply } from '../client/loopback-llm-server';
import { startOpenAiLoopback } from '../client/loopback-openai-server';

type Msg = { role: string; content?: string | null };

/** Asks for one count of Order, then answers with the tool's result. */
function countOrders(body: Record<string, unknown>): ScriptedReply {
  const messages = body.messages as Msg[];
  if (!messages.some((m) => m.role === 'tool')) {
    return {
      toolCalls: [{ id: 'c1', name: 'count_objects', arguments: { class_name: 'Order' } }],
    };
  }
  return { text: 'done' };
}

/**
 * Hooks, security events and the master-key audit against the real Parse Server (the model of
 * the conversation case: a loopback server speaking the OpenAI HTTP API).
 */
describe('agent hooks and security events on a real Parse Server', () => {
  let bed: AgentTestBed;
  let llm: LoopbackLlmServer;
  let tokens: { alice: string };
  let lines: string[];
  const savedProvider = process.env.LLM_PROVIDER;

  beforeAll(async () => {
    delete process.env.LLM_PROVIDER;
    tokens = await seedDemo();
    llm = await startOpenAiLoopback(countOrders);
    bed = await createAgentTestBed(CORE_MODELS, {
      llm: { provider: 'openai', apiKey: 'sk-loopback', baseURL: llm.baseURL, maxRetries: 0 },
    });
  }, 60_000);

  beforeEach(() => {
    lines = [];
    routeSecurityBanners((line) => lines.push(line));
  });

  afterAll(async () => {
    routeSecurityBanners(() => undefined);
    if (savedProvider !== undefined) process.env.LLM_PROVIDER = savedProvider;
    await bed?.close();
    await llm?.close();
  });

  it('puts a denied call on securityEvents$ with one log line, and no row or where value', async () => {
    const events: SecurityEvent[] = [];
    const sub = bed.events.securityEvents$.subscribe((e) => events.push(e));
    const agent = bed.factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
    const envelope = await agent.execute('query_class', {
      class_name: 'ApiCredential',
      where: { secret: 'sk-live-should-not-leak' },
    });
    sub.unsubscribe();
    expect(envelope).toMatchObject({ success: false, error_code: 'access_denied' });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'denied',
      tool: 'query_class',
      error_code: 'access_denied',
      error_class: 'AccessDeniedError',
      auth_type: 'session_token',
      using_master_key: false,
      tenant_id: 'acme',
      args_keys: ['class_name'],
    });
    const denialLines = lines.filter((l) => l.startsWith('SECURITY denied query_class'));
    expect(denialLines).toHaveLength(1);
    const everything = JSON.stringify(events) + lines.join('\n');
    expect(everything).not.toContain('sk-live-should-not-leak');
    expect(everything).not.toContain(tokens.alice);
    // A session-token agent is not audited as a master-key one.
    expect(lines.filter((l) => l.startsWith('AUDIT'))).toEqual([]);

    // An allowed call adds nothing to the security stream.
    const after: SecurityEvent[] = [];
    const sub2 = bed.events.securityEvents$.subscribe((e) => after.push(e));
    await expect(agent.execute('count_objects', { class_name: 'Order' })).resolves.toMatchObject({
      success: true,
    });
    sub2.unsubscribe();
    expect(after).toEqual([]);
  });

  it('a hook sees a real call before and after, and a refusal keeps the tool from running', async () => {
    let runs = 0;
    bed.tools.register({
      name: 'order_count_probe',
      description: 'Counts Order rows through the agent’s read path, and its own runs.',
      handler: async (_args, context) => {
        runs++;
        return { count: await context.read.count('Order', {}) };
      },
    });
    const seen: Array<['before', ToolCallInfo] | ['after', ToolCallInfo, ToolCallOutcome]> = [];
    const agent = bed.factory.create({
      sessionToken: tokens.alice,
      tenantId: 'acme',
      hooks: {
        beforeToolCall: (call) => {
          seen.push(['before', call]);
          return call.tool === 'order_count_probe'
            ? { allow: false, reason: 'no probes' }
            : undefined;
        },
        afterToolCall: (call, outcome) => seen.push(['after', call, outcome]),
      },
    });
    const counted = await agent.execute('count_objects', { class_name: 'Order' });
    expect(counted.success).toBe(true);
    expect(seen.map((s) => [s[0], s[1].tool])).toEqual([
      ['before', 'count_objects'],
      ['after', 'count_objects'],
    ]);
    const outcome = seen[1][2] as ToolCallOutcome;
    expect(outcome.envelope).toEqual(counted);

    const events: ToolCallEvent[] = [];
    const sub = bed.events.toolCalls$.subscribe((e) => events.push(e));
    const refused = await agent.execute('order_count_probe');
    sub.unsubscribe();
    expect(refused).toMatchObject({
      success: false,
      error_code: 'access_denied',
      details: { kind: 'hook_refused' },
    });
    expect(runs).toBe(0);
    expect(seen.filter((s) => s[1].tool === 'order_count_probe').map((s) => s[0])).toEqual([
      'before',
    ]);
    expect(events).toEqual([
      expect.objectContaining({
        tool: 'order_count_probe',
        success: false,
        error_class: 'AccessDeniedError',
        denial_kind: 'hook_refused',
      }),
    ]);
    expect(agent.operationLog.map((e) => [e.tool, e.success])).toEqual([
      ['count_objects', true],
      ['order_count_probe', false],
    ]);
  });

  it('writes one audit line per master-key call, and none when masterKeyAudit is false', async () => {
    const agent = bed.factory.create();
    await agent.execute('count_objects', { class_name: 'Order', where: { total: { $gt: 0 } } });
    const audit = lines.filter((l) => l.startsWith('AUDIT'));
    expect(audit).toEqual([
      expect.stringMatching(
        /^AUDIT master-key call count_objects args=\[class_name\] ok \d+ms agent=[0-9a-f-]{36} depth=0 permissions=readonly$/,
      ),
    ]);
    lines.length = 0;
    await bed.factory.create({ masterKeyAudit: false }).execute('count_objects', {
      class_name: 'Order',
    });
    expect(lines).toEqual([]);
  });

  it('runs onLlmResponse on each model response of agent.ask, and the tool hooks for its calls', async () => {
    const responses: LlmResponseInfo[] = [];
    const tools: string[] = [];
    const agent = bed.factory.create({
      sessionToken: tokens.alice,
      tenantId: 'acme',
      hooks: {
        onLlmResponse: (r) => responses.push(r),
        afterToolCall: (call, outcome) => tools.push(`${call.tool}:${outcome.envelope.success}`),
      },
    });
    const answer = await agent.ask('How many orders?');
    expect(answer.text).toBe('done');
    expect(responses.map((r) => [r.iteration, r.toolCalls.map((c) => c.name), r.text])).toEqual([
      [1, ['count_objects'], ''],
      [2, [], 'done'],
    ]);
    expect(responses[0].usage.inputTokens).toBeGreaterThan(0);
    expect(tools).toEqual(['count_objects:true']);
  });
});
