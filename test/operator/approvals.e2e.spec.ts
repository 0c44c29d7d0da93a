import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import {
  AgentEvents,
  AgentMethod,
  ParseClass,
  type AgentMethodContext,
  type ApprovalEvent,
} from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/core/untrusted-data';
import { randomBytes } from 'node:crypto';
import { createObject } from '../harness/fixtures';
import { parseRest } from '../harness/parse-rest';
import { startMcpTestApp, type McpTestApp } from '../mcp/mcp-test-app';

const GATES = ['PARSE_AGENT_ALLOW_WRITE_TOOLS', 'PARSE_AGENT_ALLOW_RAW_CRUD'] as const;
const suffix = randomBytes(4).toString('hex');
const TICKET = `ApprovalTicket${suffix}`;

@ParseClass(TICKET)
class ApprovalTicket {
  @AgentMethod({ permission: 'write', description: 'Closes the ticket.', supportsDryRun: true })
  async close(_args: Record<string, never>, ctx: AgentMethodContext) {
    if (ctx.dryRun) return { would_close: ctx.objectId };
    await ctx.write.update(TICKET, ctx.objectId!, { status: 'closed' });
    return { closed: ctx.objectId };
  }

  @AgentMethod({ permission: 'readonly', description: 'Says hello.' })
  hello() {
    return { hello: true };
  }
}

type Answer = (message: string, requestId: string | number) => ElicitResult | Promise<ElicitResult>;

/**
 * Issue 36 item 4 with the official MCP SDK client: `confirm: { write, admin, timeoutMs }` holds
 * write- and admin-tier calls for a person's approval (call_method at its method's tier), fails
 * closed (no way to ask, decline, timeout), emits one approval event per round trip, and only
 * the session and the identity that were asked can answer.
 */
describe('approvals per tier (confirm option) over MCP elicitation', () => {
  let t: McpTestApp;
  const approvals: ApprovalEvent[] = [];
  const clients: Client[] = [];
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const g of GATES) {
      saved[g] = process.env[g];
      process.env[g] = 'true';
    }
    // The class exists (with a row) before the agent first reads its schema.
    await createObject(TICKET, { title: 'seed', status: 'open' });
    t = await startMcpTestApp({
      agentFactory: (req) => ({
        permissions: 'admin',
        confirm: {
          write: true,
          admin: true,
          timeoutMs: Number(req.headers['x-approval-timeout'] ?? 5000),
        },
      }),
      mcp: {
        // Tells two operators apart (both master-key agents): the answer must come from the one asked.
        userKey: (req) => {
          const user = req.headers['x-operator'];
          return typeof user === 'string' ? user : 'operator-a';
        },
      },
      module: { models: [ApprovalTicket] },
    });
    t.app.get(AgentEvents).approvals$.subscribe((e) => approvals.push(e));
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await t.close();
    for (const g of GATES) {
      if (saved[g] === undefined) delete process.env[g];
      else process.env[g] = saved[g];
    }
  });

  async function connect(
    answer?: Answer,
    headers: Record<string, string> = {},
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers },
    });
    const client = new Client(
      { name: 'approvals-e2e', version: '1.0.0' },
      { capabilities: answer ? { elicitation: {} } : {} },
    );
    if (answer) {
      client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
        Promise.resolve(answer(request.params.message, extra.requestId)),
      );
    }
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  const countTitled = async (title: string) =>
    (
      await parseRest<{ count: number }>(
        'GET',
        `/classes/${TICKET}?count=1&limit=0&where=${encodeURIComponent(JSON.stringify({ title }))}`,
        undefined,
        { masterKey: true },
      )
    ).count;

  const errorText = (result: Record<string, unknown>) =>
    unwrapUntrusted((result.content as Array<{ text: string }>)[0].text);

  const lastApproval = (tool: string) => approvals.filter((a) => a.tool === tool).at(-1);

  it('a write waits for approval and runs once approved; the event measures the wait', async () => {
    const asked: string[] = [];
    const { client } = await connect(async (message) => {
      asked.push(message);
      await new Promise((r) => setTimeout(r, 150));
      return { action: 'accept', content: { approve: true } };
    });
    const title = `approved-${suffix}`;
    const result = await client.callTool({
      name: 'create_object',
      arguments: { class_name: TICKET, values: { title } },
    });
    expect(result.isError ? errorText(result) : 'ok').toBe('ok');
    expect(asked).toEqual([expect.stringContaining(`create_object on ${TICKET} (write tier)`)]);
    expect(await countTitled(title)).toBe(1);
    const event = lastApproval('create_object')!;
    expect(event).toMatchObject({ tool: 'create_object', tier: 'write', outcome: 'approved' });
    expect(event.reason).toBeUndefined();
    expect(event.wait_ms).toBeGreaterThanOrEqual(140);
  });

  it('times out fail-closed: nothing is written, the event says timeout', async () => {
    const { client } = await connect(
      async () => {
        await new Promise((r) => setTimeout(r, 1500));
        return { action: 'accept', content: { approve: true } };
      },
      { 'x-approval-timeout': '300' },
    );
    const title = `late-${suffix}`;
    const result = await client.callTool({
      name: 'create_object',
      arguments: { class_name: TICKET, values: { title } },
    });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(/Nobody approved create_object .* within/);
    expect(result.structuredContent).toMatchObject({ details: { kind: 'approval_timeout' } });
    await new Promise((r) => setTimeout(r, 1600)); // the late answer arrives, and changes nothing
    expect(await countTitled(title)).toBe(0);
    const event = lastApproval('create_object')!;
    expect(event).toMatchObject({ tier: 'write', outcome: 'timeout' });
    expect(event.wait_ms).toBeGreaterThanOrEqual(290);
    expect(event.wait_ms).toBeLessThan(1500);
  });

  it('refuses when the client cannot ask, and when the person declines', async () => {
    const { client: mute } = await connect();
    const title = `mute-${suffix}`;
    const r1 = await mute.callTool({
      name: 'create_object',
      arguments: { class_name: TICKET, values: { title } },
    });
    expect(r1.structuredContent).toMatchObject({ details: { kind: 'approval_unavailable' } });
    const { client: no } = await connect(() => ({ action: 'decline' }));
    const r2 = await no.callTool({
      name: 'create_object',
      arguments: { class_name: TICKET, values: { title } },
    });
    expect(r2.structuredContent).toMatchObject({ details: { kind: 'approval_declined' } });
    expect(await countTitled(title)).toBe(0);
    expect(approvals.slice(-2).map((a) => a.outcome)).toEqual(['unavailable', 'declined']);
  });

  it('call_method counts at its method’s tier; reads and dry runs are never held', async () => {
    const id = await createObject(TICKET, { title: `method-${suffix}`, status: 'open' });
    const asked: string[] = [];
    const { client } = await connect((message) => {
      asked.push(message);
      return { action: 'accept', content: { approve: true } };
    });
    const hello = await client.callTool({
      name: 'call_method',
      arguments: { class_name: TICKET, method_name: 'hello', object_id: id },
    });
    expect(hello.isError ? errorText(hello) : 'ok').toBe('ok');
    const dry = await client.callTool({
      name: 'call_method',
      arguments: {
        class_name: TICKET,
        method_name: 'close',
        object_id: id,
        arguments: { dry_run: true },
      },
    });
    expect(dry.isError).toBeFalsy();
    await client.callTool({ name: 'query_class', arguments: { class_name: TICKET } });
    expect(asked).toEqual([]);
    const close = await client.callTool({
      name: 'call_method',
      arguments: { class_name: TICKET, method_name: 'close', object_id: id },
    });
    expect(close.isError).toBeFalsy();
    expect(asked).toEqual([
      expect.stringContaining(`call_method 'close' on ${TICKET} ${id} (write tier)`),
    ]);
    expect(lastApproval('call_method')).toMatchObject({
      tier: 'write',
      method: 'close',
      outcome: 'approved',
    });
  });

  it('an admin call asks once: the approval is its confirmation', async () => {
    const id = await createObject(TICKET, { title: `delete-${suffix}` });
    const asked: string[] = [];
    const { client } = await connect((message) => {
      asked.push(message);
      return { action: 'accept', content: { approve: true } };
    });
    const result = await client.callTool({
      name: 'delete_object',
      arguments: { class_name: TICKET, object_id: id },
    });
    expect(result.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(lastApproval('delete_object')).toMatchObject({ tier: 'admin', outcome: 'approved' });
  });

  /** POSTs an approval as `headers` say, for a question another session was asked. */
  async function answerAs(headers: Record<string, string>, requestId: string | number) {
    return fetch(t.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: requestId,
        result: { action: 'accept', content: { approve: true } },
      }),
    });
  }

  it.each([
    ['the asking session and operator (the control: it counts)', 'operator-a', false, true],
    ['another session of the same operator', 'operator-a', true, false],
    ['another operator, on the asking session', 'operator-b', false, false],
    ['another operator, on a session of their own', 'operator-b', true, false],
  ] as const)('an approval POSTed by %s', async (_label, operator, ownSession, counts) => {
    let other: string | undefined;
    if (ownSession) {
      const { transport } = await connect(undefined, { 'x-operator': operator });
      other = transport.sessionId;
    }
    let forged: Promise<Response> | undefined;
    const { client, transport: asking } = await connect(
      async (_message, requestId) => {
        const sessionId = other ?? asking.sessionId!;
        forged = answerAs({ 'x-operator': operator, 'mcp-session-id': sessionId }, requestId);
        await forged;
        // The person never answers: only the forged approval was sent.
        await new Promise((r) => setTimeout(r, 1200));
        return { action: 'cancel' };
      },
      { 'x-approval-timeout': '700' },
    );
    const title = `forged-${operator}-${String(ownSession)}-${suffix}`;
    const result = await client.callTool({
      name: 'create_object',
      arguments: { class_name: TICKET, values: { title } },
    });
    expect(forged).toBeDefined();
    if (counts) {
      expect(result.isError ? errorText(result) : 'ok').toBe('ok');
      expect(await countTitled(title)).toBe(1);
      return;
    }
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ details: { kind: 'approval_timeout' } });
    expect(await countTitled(title)).toBe(0);
  });
});
