import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AgentUnauthorizedError, type ParseAgentModuleOptions } from 'nestjs-parse-agent';
import { randomBytes } from 'node:crypto';
import { createUser, logIn, type SeededUser } from '../harness/fixtures';

/** `Authorization: Bearer <Parse session token>` becomes a session-token agent. */
export const parseBearerAgentFactory: ParseAgentModuleOptions['agentFactory'] = (req) => {
  const match = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''));
  if (!match) throw new AgentUnauthorizedError('missing bearer token', { reason: 'no_token' });
  return { sessionToken: match[1] };
};

export interface RawReply {
  status: number;
  headers: Headers;
  json: { error?: { code: number; message: string }; result?: unknown } | undefined;
}

export async function post(
  url: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<RawReply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

export const initialize = (id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'session-caps-suite', version: '1.0.0' },
  },
});

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Two real Parse users; alice will log in many more times. */
export async function seedUsers(): Promise<{ alice: SeededUser; bob: SeededUser }> {
  const suffix = randomBytes(4).toString('hex');
  return {
    alice: await createUser(`caps_alice_${suffix}`),
    bob: await createUser(`caps_bob_${suffix}`),
  };
}

/** Fresh session tokens of one user, each from its own Parse /login. */
export async function logInTimes(user: SeededUser, times: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < times; i++) tokens.push(await logIn(user.username, user.password));
  return tokens;
}

/** Bob's one live session, opened by the official MCP SDK client. */
export async function connectSdk(
  url: string,
  sessionToken: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: bearer(sessionToken) },
  });
  const client = new Client({ name: 'session-caps-suite', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/**
 * Alice opens sessions from many logins against two endpoint URLs (one node twice, or two nodes
 * sharing Redis); past her cap each newcomer is refused with 429 saying why, while bob's live
 * session keeps answering and none of alice's earlier sessions is ended.
 */
export async function floodOneUserWhileAnotherWorks(options: {
  urls: [string, string];
  cap: number;
  alice: SeededUser;
  bob: SeededUser;
}): Promise<void> {
  const { urls, cap, alice, bob } = options;
  const bobSdk = await connectSdk(urls[0], bob.sessionToken);
  try {
    expect(bobSdk.transport.sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const tokens = await logInTimes(alice, cap + 6);
    const opened: Array<{ token: string; id: string; url: string }> = [];
    for (const [i, token] of tokens.entries()) {
      const url = urls[i % 2];
      const reply = await post(url, initialize(i + 1), bearer(token));
      if (i < cap) {
        expect(reply.status).toBe(200);
        opened.push({ token, id: reply.headers.get('mcp-session-id')!, url });
      } else {
        expect(reply.status).toBe(429);
        expect(reply.headers.get('mcp-session-id')).toBeNull();
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(reply.json?.error?.code).toBe(-32000);
        expect(reply.json?.error?.message).toMatch(
          new RegExp(`Too many open MCP sessions for this user \\(limit ${cap}\\)`),
        );
        expect(reply.json?.error?.message).toMatch(/DELETE/);
      }
      // Bob's live session is never the one that makes room (it used to answer 404 here).
      const { tools } = await bobSdk.client.listTools();
      expect(tools.length).toBeGreaterThan(0);
    }
    // Alice's own earlier sessions were not ended either.
    for (const [i, s] of opened.entries()) {
      const listed = await post(
        urls[(i + 1) % 2],
        { jsonrpc: '2.0', id: 100 + i, method: 'tools/list' },
        { ...bearer(s.token), 'Mcp-Session-Id': s.id, 'MCP-Protocol-Version': '2025-06-18' },
      );
      expect(listed.status).toBe(200);
    }
    // Ending one of her sessions makes room for exactly one more.
    const ended = await fetch(opened[0].url, {
      method: 'DELETE',
      headers: { ...bearer(opened[0].token), 'Mcp-Session-Id': opened[0].id },
    });
    expect(ended.status).toBe(204);
    const [late, later] = await logInTimes(alice, 2);
    expect((await post(urls[1], initialize(500), bearer(late))).status).toBe(200);
    expect((await post(urls[0], initialize(501), bearer(later))).status).toBe(429);
    // Bob, a different user, can still open another session of his own.
    expect((await post(urls[1], initialize(502), bearer(bob.sessionToken))).status).toBe(200);
    expect((await bobSdk.client.listTools()).tools.length).toBeGreaterThan(0);
  } finally {
    await bobSdk.client.close();
  }
}
