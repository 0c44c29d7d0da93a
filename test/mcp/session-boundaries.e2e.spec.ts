import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { bindAgentToPrincipal, ParseAgentAuthGuard } from 'nestjs-parse-agent';
import { createObject, createUser, type SeededUser } from '../harness/fixtures';
import { parseRest } from '../harness/parse-rest';
import { eventually, startMcpTestApp, type McpTestApp } from './mcp-test-app';

/**
 * Who may touch an MCP session, with the shipped guard (ParseAgentAuthGuard: a Parse session
 * checked with the real Parse Server, or the operator key) on Express and on Fastify:
 *
 * - DELETE ends a session only for its owner: no credentials get 401, another user or the
 *   operator 404, and the session goes on working for its owner;
 * - a header whose name has an underscore (`x_mcp_api_key`, `mcp_session_id`) is never read as
 *   the dash-named one;
 * - an answer to a confirmation question (a JSON-RPC response to `elicitation/create`) POSTed by
 *   anyone but the session's owner is refused and does not settle the owner's question.
 *
 * The owner uses the official MCP SDK client; the others send raw HTTP, as an attacker would.
 */
const OPERATOR_KEY = `operator-${randomBytes(6).toString('hex')}`;
const GATES = ['PARSE_AGENT_ALLOW_WRITE_TOOLS', 'PARSE_AGENT_ALLOW_RAW_CRUD'] as const;
const ACCEPT = 'application/json, text/event-stream';

describe.each(['express', 'fastify'] as const)('MCP session boundaries on %s', (platform) => {
  let t: McpTestApp;
  let alice: SeededUser;
  let bob: SeededUser;
  let className: string;
  /** Alice's row, created before the app starts so its class is in the schema the app reads. */
  let rowId: string;
  const clients: Client[] = [];
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const gate of GATES) {
      saved[gate] = process.env[gate];
      process.env[gate] = 'true';
    }
    const suffix = randomBytes(4).toString('hex');
    className = `SessionEdge${suffix}`;
    alice = await createUser(`se_alice_${suffix}`);
    bob = await createUser(`se_bob_${suffix}`);
    rowId = await createObject(
      className,
      { label: 'keep me' },
      { [alice.objectId]: { read: true, write: true } },
    );
    t = await startMcpTestApp({
      platform,
      mcp: { guards: [ParseAgentAuthGuard], initializeRateLimit: false },
      module: { auth: { apiKey: OPERATOR_KEY } },
      // Users act with their own session (Parse enforces their ACLs); deletes ask first.
      agentFactory: bindAgentToPrincipal({
        requireTenant: false,
        userPermissions: 'admin',
        extend: () => ({ allowMutations: true, confirmationRequired: true }),
      }),
    });
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await t?.close();
    for (const gate of GATES) {
      if (saved[gate] === undefined) delete process.env[gate];
      else process.env[gate] = saved[gate];
    }
  });

  const bearer = (user: SeededUser) => ({ Authorization: `Bearer ${user.sessionToken}` });
  const operator = { 'X-MCP-API-Key': OPERATOR_KEY };

  async function connect(
    user: SeededUser,
    answer?: (requestId: string | number) => Promise<ElicitResult>,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers: bearer(user) },
    });
    const client = new Client(
      { name: `session-edge-${platform}`, version: '1.0.0' },
      { capabilities: answer ? { elicitation: {} } : {} },
    );
    if (answer) {
      client.setRequestHandler(ElicitRequestSchema, (_request, extra) => answer(extra.requestId));
    }
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  const send = (method: 'POST' | 'DELETE', headers: Record<string, string>, body?: unknown) =>
    fetch(t.url, {
      method,
      headers: {
        Accept: ACCEPT,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  /** The session answers its owner (a listing through the SDK client works). */
  async function stillOpen(client: Client): Promise<void> {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
  }

  it('DELETE ends a session only for its owner: 401 without credentials, 404 for anyone else', async () => {
    const { client, transport } = await connect(alice);
    const session = transport.sessionId!;
    expect(session).toBeTruthy();

    const anonymous = await send('DELETE', { 'Mcp-Session-Id': session });
    expect(anonymous.status).toBe(401);
    await stillOpen(client);

    const forged = await send('DELETE', {
      'Mcp-Session-Id': session,
      Authorization: `Bearer r:${randomBytes(16).toString('hex')}`,
    });
    expect(forged.status).toBe(401);
    await stillOpen(client);

    const otherUser = await send('DELETE', { 'Mcp-Session-Id': session, ...bearer(bob) });
    expect(otherUser.status).toBe(404);
    await stillOpen(client);

    const theOperator = await send('DELETE', { 'Mcp-Session-Id': session, ...operator });
    expect(theOperator.status).toBe(404);
    await stillOpen(client);

    // The owner can.
    await transport.terminateSession();
    const after = await send(
      'POST',
      { 'Mcp-Session-Id': session, ...bearer(alice) },
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
    );
    expect(after.status).toBe(404);
  });

  it('an underscore header is not read as the dash-named one (x_mcp_api_key, mcp_session_id)', async () => {
    const listing = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    // The operator key under an underscore name is no key at all.
    const smuggledKey = await send('POST', { x_mcp_api_key: OPERATOR_KEY }, listing);
    expect(smuggledKey.status).toBe(401);
    const genuineKey = await send('POST', operator, listing);
    expect(genuineKey.status).toBe(200);

    // A session id under an underscore name names no session: DELETE says the header is missing.
    const { client, transport } = await connect(alice);
    const session = transport.sessionId!;
    const smuggledSession = await send('DELETE', { mcp_session_id: session, ...bearer(alice) });
    expect(smuggledSession.status).toBe(400);
    await stillOpen(client);
    // Nor can it ride beside the real header to override it.
    const beside = await send('DELETE', {
      'Mcp-Session-Id': `x${session.slice(1)}`,
      mcp_session_id: session,
      ...bearer(alice),
    });
    expect(beside.status).toBe(404);
    await stillOpen(client);
  });

  it('an answer to the owner’s confirmation question, POSTed by anyone else, is refused and settles nothing', async () => {
    let asked: string | number | undefined;
    let reply!: (result: ElicitResult) => void;
    const answered = new Promise<ElicitResult>((resolve) => (reply = resolve));
    const { client, transport } = await connect(alice, (requestId) => {
      asked = requestId;
      return answered;
    });
    const session = transport.sessionId!;
    const call = client.callTool({
      name: 'delete_object',
      arguments: { class_name: className, object_id: rowId },
    });
    await eventually(() => expect(asked).toBeDefined());

    const accept = {
      jsonrpc: '2.0',
      id: asked,
      result: { action: 'accept', content: { confirm: true } },
    };
    // Another user naming the owner's session: 404, as for any other request.
    expect((await send('POST', { 'Mcp-Session-Id': session, ...bearer(bob) }, accept)).status).toBe(
      404,
    );
    // The operator: another principal too.
    expect((await send('POST', { 'Mcp-Session-Id': session, ...operator }, accept)).status).toBe(
      404,
    );
    // No credentials: the guard refuses before anything else.
    expect((await send('POST', { 'Mcp-Session-Id': session }, accept)).status).toBe(401);
    // Without a session (or with it under an underscore name) an answer reaches no question.
    const stateless = await send('POST', { ...bearer(bob) }, accept);
    expect(stateless.status).toBe(202);
    const underscored = await send('POST', { mcp_session_id: session, ...bearer(bob) }, accept);
    expect(underscored.status).toBe(202);

    // Nothing was settled: the row is there and the call still waits for its owner.
    const exists = () =>
      parseRest('GET', `/classes/${className}/${rowId}`, undefined, { masterKey: true }).then(
        () => true,
        () => false,
      );
    expect(await exists()).toBe(true);
    let settled = false;
    void call.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe(false);

    // The owner declines; had an accept above been taken, the row would be gone by now.
    reply({ action: 'decline' });
    const result = await call;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('did not confirm');
    expect(await exists()).toBe(true);
  });
});
