import type { SeededUser } from '../harness/fixtures';
import type { McpEndpointOptions } from 'nestjs-parse-agent';
import { startMcpTestApp, type McpTestApp } from './mcp-test-app';
import {
  bearer,
  connectSdk,
  floodOneUserWhileAnotherWorks,
  initialize,
  logInTimes,
  parseBearerAgentFactory,
  post,
  seedUsers,
} from './session-caps.scenario';

describe('MCP session caps count users, not tokens (in-memory sessions, real Parse logins)', () => {
  let alice: SeededUser;
  let bob: SeededUser;
  const apps: McpTestApp[] = [];

  beforeAll(async () => {
    ({ alice, bob } = await seedUsers());
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  async function start(mcp: McpEndpointOptions): Promise<McpTestApp> {
    const app = await startMcpTestApp({ agentFactory: parseBearerAgentFactory, mcp });
    apps.push(app);
    return app;
  }

  it("one user's many logins cannot push another user's live session out", async () => {
    const t = await start({ maxSessionsPerPrincipal: 4 });
    await floodOneUserWhileAnotherWorks({ urls: [t.url, t.url], cap: 4, alice, bob });
  });

  it('rate-limits initialize per user across tokens (429, Retry-After), not other users', async () => {
    const t = await start({ initializeRateLimit: { limit: 3, windowSeconds: 60 } });
    const tokens = await logInTimes(alice, 4);
    for (const token of tokens.slice(0, 3)) {
      expect((await post(t.url, initialize(), bearer(token))).status).toBe(200);
    }
    const refused = await post(t.url, initialize(7), bearer(tokens[3]));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.json).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32000,
        message: expect.stringMatching(
          /^Too many initialize requests for this user \(at most 3 per 60s\): keep using an open session/,
        ),
      },
    });
    // Another user has a window of their own.
    expect((await post(t.url, initialize(), bearer(bob.sessionToken))).status).toBe(200);
  });

  it('refuses a newcomer with 503 when the table is full, never ending a live session', async () => {
    const t = await start({ maxSessions: 2 });
    const bobSdk = await connectSdk(t.url, bob.sessionToken);
    try {
      const [token] = await logInTimes(alice, 1);
      expect((await post(t.url, initialize(), bearer(token))).status).toBe(200);
      const full = await post(t.url, initialize(3), bearer(alice.sessionToken));
      expect(full.status).toBe(503);
      expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(full.json?.error?.message).toMatch(/maximum of 2 open MCP sessions/);
      expect((await bobSdk.client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await bobSdk.client.close();
    }
  });

  it('refuses initialize with a session token Parse does not know (401), so forged tokens are not new users', async () => {
    const t = await start({});
    const forged = await post(t.url, initialize(), bearer('r:0123456789abcdef0123456789abcdef'));
    expect(forged.status).toBe(401);
    expect(forged.json?.error).toEqual({ code: -32001, message: 'Unauthorized' });
    expect(forged.headers.get('mcp-session-id')).toBeNull();
  });

  it("counts by the host's userKey when it supplies one", async () => {
    const t = await start({
      maxSessionsPerPrincipal: 1,
      // Every caller is one account here: alice's and bob's sessions count together.
      userKey: () => 'shared-account',
    });
    expect((await post(t.url, initialize(), bearer(alice.sessionToken))).status).toBe(200);
    expect((await post(t.url, initialize(), bearer(bob.sessionToken))).status).toBe(429);
  });
});
