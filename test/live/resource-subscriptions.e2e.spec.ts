import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  AgentVisible,
  McpNotifier,
  ParseAgentAuthGuard,
  ParseAgentModule,
  ParseClass,
} from 'nestjs-parse-agent';
import { LiveQueryHost } from 'nestjs-parse-agent/nest/live-query.host';
import { tenantAcl } from '../../src/embedded/seed/demo-dataset';
import { agentOptionsFor, DEMO_TENANT_SOURCE } from '../../src/example/auth/agent-factory';
import { CORE_MODELS } from '../../src/example/models';
import { seedDemo } from '../harness/demo-data';
import { notifiedAfterWrite } from './latency';
import { until } from './live-app';
import { startLiveQueryStack, type LiveQueryStack } from './live-query-stack';

/**
 * resources/subscribe backed by a real Parse LiveQuery server, with the official MCP SDK client over
 * Streamable HTTP and the demo's identities (alice: acme staff, bob: globex staff, carol: acme
 * staff and admin) on the demo's dataset. Writes go through Parse REST (/parse) of the server that
 * runs LiveQuery; the LiveQuery server's own socket and subscription counts are the oracle for
 * "no socket opened" and teardown.
 */
/** A class whose CLP is Parse's default (public find): session users subscribe with their own token. */
@ParseClass('LiveNote')
@AgentVisible()
class LiveNote {}

const OPERATOR_KEY = `operator-${randomBytes(6).toString('hex')}`;
const PER_SESSION = 4;

describe('MCP resource subscriptions on Parse LiveQuery (Streamable HTTP, official SDK client)', () => {
  let stack: LiveQueryStack;
  let app: INestApplication;
  let url: string;
  let tokens: { alice: string; bob: string; carol: string };
  const clients: Client[] = [];

  beforeAll(async () => {
    const seeded = await seedDemo();
    tokens = { alice: seeded.alice, bob: seeded.bob, carol: seeded.carol };
    stack = await startLiveQueryStack([
      'Order',
      'Customer',
      'ApiCredential',
      '_Session',
      'LiveNote',
    ]);
    await rest('POST', '/classes/LiveNote', { text: 'first', ACL: {} }, { masterKey: true });
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: {
            serverURL: stack.serverURL,
            appId: stack.appId,
            masterKey: stack.masterKey,
            javascriptKey: stack.javascriptKey,
          },
          models: [...CORE_MODELS, LiveNote],
          unregisteredClasses: 'hidden',
          defaults: { permissions: 'readonly' },
          rateLimiter: { check: () => undefined },
          suppressSecurityBanners: true,
          auth: { apiKey: OPERATOR_KEY, tenant: DEMO_TENANT_SOURCE },
          agentFactory: (request) => agentOptionsFor(request),
          liveQuery: {
            classNames: ['Order', 'Customer', 'ApiCredential', '_Session', 'LiveNote'],
            maxSubscriptionsPerSession: PER_SESSION,
            debounceMs: 50,
          },
          mcp: { guards: [ParseAgentAuthGuard], initializeRateLimit: false },
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({
      logger: ['warn', 'error', 'log'],
      forceCloseConnections: true,
    });
    await app.listen(0, '127.0.0.1');
    // LiveQuery is probed in the background from bootstrap on; the suite starts once it answered.
    expect(await app.get(LiveQueryHost).ready).toBe(true);
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/mcp`;
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await app?.close();
    await stack?.stop();
  });

  interface Connected {
    client: Client;
    transport: StreamableHTTPClientTransport;
    updates: string[];
  }

  async function connect(headers: Record<string, string>): Promise<Connected> {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers },
    });
    const client = new Client({ name: 'live-e2e', version: '1.0.0' });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await client.connect(transport);
    clients.push(client);
    // The SDK opens the session's GET stream after initialize; wait until the server holds it.
    await new Promise((resolve) => setTimeout(resolve, 150));
    return { client, transport, updates };
  }
  const user = (token: string) => connect({ Authorization: `Bearer ${token}` });

  const subs = async (token?: string) => (await stack.counts(token)).subscriptions;
  const socks = async (token?: string) => (await stack.counts(token)).sockets;

  async function rest(
    method: string,
    path: string,
    body: unknown,
    auth: { masterKey?: boolean; sessionToken?: string },
  ): Promise<Record<string, unknown>> {
    const res = await fetch(stack.serverURL + path, {
      method,
      headers: {
        'X-Parse-Application-Id': stack.appId,
        'X-Parse-JavaScript-Key': stack.javascriptKey,
        'Content-Type': 'application/json',
        ...(auth.masterKey ? { 'X-Parse-Master-Key': stack.masterKey } : {}),
        ...(auth.sessionToken ? { 'X-Parse-Session-Token': auth.sessionToken } : {}),
      },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }
  const order = (tenant: string, status = 'pending') => ({
    tenantId: tenant,
    orderNumber: `${tenant.toUpperCase()}-LIVE-${randomBytes(3).toString('hex')}`,
    quantity: 1,
    unitPrice: 10,
    total: 10,
    status,
    channel: 'web',
    isDeleted: false,
    ACL: tenantAcl(tenant),
  });

  it('advertises resources.subscribe and the query template once LiveQuery answers', async () => {
    const { client } = await user(tokens.alice);
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain(
      'parse://{className}/query{?where,keys}',
    );
  });

  it('alice hears of a new acme order within 1 s; bob’s globex order never reaches her', async () => {
    const alice = await user(tokens.alice);
    const uri = 'parse://Order/count';
    await alice.client.subscribeResource({ uri });
    await until(async () => (await subs()) === 1);

    // Bob's tenant: Parse's ACL and alice's tenant scope both keep it from her.
    await rest('POST', '/classes/Order', order('globex'), { masterKey: true });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(alice.updates).toEqual([]);

    // An acme order (the back office writes through /parse with the master key: Order's CLP is
    // closed to client creates), then carol's own update of an acme order through /parse.
    const created = await notifiedAfterWrite(
      'the acme order',
      () => rest('POST', '/classes/Order', order('acme'), { masterKey: true }),
      () => alice.updates.length >= 1,
    );
    expect(alice.updates).toEqual([uri]);

    // The client re-reads: the count is what Parse REST counts for her.
    const read = await alice.client.readResource({ uri });
    const counted = JSON.parse(String((read.contents[0] as { text: string }).text)) as {
      count: number;
    };
    const truth = (await fetch(
      `${stack.serverURL}/classes/Order?count=1&limit=0&where=${encodeURIComponent(JSON.stringify({ tenantId: 'acme', isDeleted: { $ne: true } }))}`,
      {
        headers: {
          'X-Parse-Application-Id': stack.appId,
          'X-Parse-JavaScript-Key': stack.javascriptKey,
          'X-Parse-Session-Token': tokens.alice,
        },
      },
    ).then((r) => r.json())) as { count: number };
    expect(counted.count).toBe(truth.count);

    // A count does not change on updates: carol's status change is not news to it.
    alice.updates.length = 0;
    await rest(
      'PUT',
      `/classes/Order/${String(created.objectId)}`,
      { status: 'paid' },
      { sessionToken: tokens.carol },
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(alice.updates).toEqual([]);
    await alice.client.unsubscribeResource({ uri });
    await until(async () => (await subs()) === 0);
  });

  it('with a public-find class, alice subscribes on her own socket and Parse filters by ACL', async () => {
    const alice = await user(tokens.alice);
    const uri = 'parse://LiveNote/samples';
    await alice.client.subscribeResource({ uri });
    await until(async () => (await subs(tokens.alice)) === 1);
    expect(await socks(tokens.alice)).toBe(1);
    const users = (await rest('GET', '/users', undefined, { masterKey: true })) as {
      results: Array<{ objectId: string; username: string }>;
    };
    const id = (name: string) => users.results.find((u) => u.username === name)!.objectId;
    // Bob's private note: Parse's ACL check on alice's socket drops it.
    await rest(
      'POST',
      '/classes/LiveNote',
      { text: 'bob only', ACL: { [id('bob')]: { read: true } } },
      {
        masterKey: true,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(alice.updates).toEqual([]);
    await rest(
      'POST',
      '/classes/LiveNote',
      { text: 'alice', ACL: { [id('alice')]: { read: true } } },
      {
        masterKey: true,
      },
    );
    await until(() => alice.updates.length === 1, 1000);
    expect(alice.updates).toEqual([uri]);
    await alice.client.unsubscribeResource({ uri });
    await until(async () => (await socks(tokens.alice)) === 0);
  });

  it('a query resource is read and watched under the whole read policy', async () => {
    const alice = await user(tokens.alice);
    const where = { status: 'refunded' };
    const uri = `parse://Order/query?where=${encodeURIComponent(JSON.stringify(where))}&keys=status,total`;
    const read = await alice.client.readResource({ uri });
    const rows = (
      JSON.parse(String((read.contents[0] as { text: string }).text)) as {
        results: Array<Record<string, unknown>>;
      }
    ).results;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.status).toBe('refunded');
    expect(rows.every((row) => row.tenantId === undefined || row.tenantId === 'acme')).toBe(true);

    await alice.client.subscribeResource({ uri });
    await until(async () => (await subs()) === 1);
    // Not matching the query: no update. Then one entering it: one update.
    const created = await rest('POST', '/classes/Order', order('acme', 'pending'), {
      masterKey: true,
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(alice.updates).toEqual([]);
    await rest(
      'PUT',
      `/classes/Order/${String(created.objectId)}`,
      { status: 'refunded' },
      { sessionToken: tokens.carol },
    );
    await until(() => alice.updates.length === 1, 1000);
    expect(alice.updates).toEqual([uri]);
    // Another tenant's matching row never notifies her.
    await rest('POST', '/classes/Order', order('globex', 'refunded'), { masterKey: true });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(alice.updates).toEqual([uri]);
    // Naming another tenant, or a field outside the allowlist, is refused like a read.
    await expect(
      alice.client.subscribeResource({
        uri: `parse://Order/query?where=${encodeURIComponent(JSON.stringify({ tenantId: 'globex' }))}`,
      }),
    ).rejects.toThrow();
    await expect(
      alice.client.subscribeResource({ uri: 'parse://Order/query?keys=isDeleted' }),
    ).rejects.toThrow();
    await alice.client.unsubscribeResource({ uri });
  });

  it('a hidden class, _Session, a role-only CLP and an unlisted class are refused and no LiveQuery socket opens', async () => {
    await until(async () => (await socks(tokens.bob)) === 0);
    const bob = await user(tokens.bob);
    const before = await stack.counts();
    for (const uri of [
      'parse://ApiCredential/count',
      'parse://_Session/count',
      'parse://NoSuchClass/samples',
      'parse://Order/schema',
    ]) {
      await expect(bob.client.subscribeResource({ uri })).rejects.toThrow();
    }
    // Customer's find is granted to a role only, which Parse LiveQuery cannot check: refused.
    await expect(bob.client.subscribeResource({ uri: 'parse://Customer/count' })).rejects.toThrow(
      /requiresAuthentication/,
    );
    // Not in liveQuery.classNames: refused, not silently dead.
    await expect(bob.client.subscribeResource({ uri: 'parse://Product/count' })).rejects.toThrow(
      /liveQuery\.classNames/,
    );
    expect(await socks(tokens.bob)).toBe(0);
    expect(await stack.counts()).toEqual(before);
  });

  it('subscribe is idempotent, one socket per identity, capped per session with the setting named', async () => {
    const first = await user(tokens.carol);
    const second = await user(tokens.carol);
    await first.client.subscribeResource({ uri: 'parse://Order/count' });
    await first.client.subscribeResource({ uri: 'parse://Order/count' });
    await first.client.subscribeResource({ uri: 'parse://Order/samples' });
    await second.client.subscribeResource({ uri: 'parse://LiveNote/count' });
    await until(async () => (await subs(tokens.carol)) === 3);
    expect(await socks(tokens.carol)).toBe(1);
    for (const kind of ['query?keys=status', 'query?keys=total']) {
      await first.client.subscribeResource({ uri: `parse://Order/${kind}` });
    }
    await expect(
      first.client.subscribeResource({ uri: 'parse://LiveNote/samples' }),
    ).rejects.toThrow(/liveQuery\.maxSubscriptionsPerSession/);
    await until(async () => (await subs(tokens.carol)) === PER_SESSION + 1);

    // Teardown: DELETE ends the first session's subscriptions; closing the second's stream ends its.
    await first.transport.terminateSession();
    await until(async () => (await subs(tokens.carol)) === 1);
    await second.client.close();
    await until(async () => (await subs(tokens.carol)) === 0);
    await until(async () => (await socks(tokens.carol)) === 0);
  });

  it('McpNotifier pushes an app notification to one session’s stream, and refuses requests', async () => {
    const alice = await user(tokens.alice);
    const bob = await user(tokens.bob);
    const heard: { alice: unknown[]; bob: unknown[] } = { alice: [], bob: [] };
    alice.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      heard.alice.push(n.params);
    });
    bob.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      heard.bob.push(n.params);
    });
    const notifier = app.get(McpNotifier);
    const params = { level: 'info', data: 'your export is ready' };
    expect(await notifier.notify(alice.transport.sessionId!, 'notifications/message', params)).toBe(
      true,
    );
    await until(() => heard.alice.length === 1, 1000);
    expect(heard.alice).toEqual([params]);
    expect(heard.bob).toEqual([]);
    expect(await notifier.notify('no-such-session', 'notifications/message', params)).toBe(false);
    await expect(notifier.notify(alice.transport.sessionId!, 'tools/call', {})).rejects.toThrow(
      /notifications only/,
    );
  });

  it('a LiveQuery restart re-establishes subscriptions and tells the client to re-read', async () => {
    const alice = await user(tokens.alice);
    const uri = 'parse://Order/samples';
    await alice.client.subscribeResource({ uri });
    await until(async () => (await subs()) === 1);
    const before = await stack.counts(tokens.alice);
    await stack.dropSockets();
    await until(async () => (await subs(tokens.alice)) === 0);
    // The SDK client reconnects (after a back-off) and sends its subscriptions again.
    await until(async () => (await subs(tokens.alice)) === before.subscriptions, 10_000);
    await until(() => alice.updates.includes(uri), 5000);
    alice.updates.length = 0;
    await rest('POST', '/classes/Order', order('acme'), { masterKey: true });
    await until(() => alice.updates.length === 1, 1000);
  }, 30_000);

  it('shutdown leaves the LiveQuery server with no subscription and no socket of ours', async () => {
    const alice = await user(tokens.alice);
    await alice.client.subscribeResource({ uri: 'parse://Order/count' });
    await until(async () => (await subs()) > 0);
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    await app.close();
    await until(async () => (await subs()) === 0 && (await socks()) === 0);
  });
});
