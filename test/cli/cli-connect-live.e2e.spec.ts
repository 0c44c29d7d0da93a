import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { seedDemo } from '../harness/demo-data';
import {
  createOrder,
  pause,
  softDeleteOrder,
  startLiveApp,
  until,
  type LiveApp,
} from '../live/live-app';
import { notifiedAfterWrite } from '../live/latency';
import { startLiveQueryStack, type LiveQueryStack } from '../live/live-query-stack';
import { CLI_CWD, cliCommand } from './cli-process';

/**
 * Resource subscriptions through `parse-agent connect`: the official MCP SDK client launches the
 * CLI's stdio-to-HTTP bridge (StdioClientTransport), which relays resources/subscribe as a POST
 * and the session's GET stream back to stdout. The app runs `liveQuery` on a real Parse LiveQuery
 * server; writes go through that server's /parse, and its own subscription count is the oracle.
 */
const IDLE_MS = 3000;

describe('parse-agent connect relays resource subscriptions (stdio -> HTTP -> Parse LiveQuery)', () => {
  let stack: LiveQueryStack;
  let live: LiveApp;
  /** The same app with a short session idle time: sessions expire while the client listens. */
  let brief: LiveApp;
  let tokens: { alice: string; bob: string; carol: string };

  beforeAll(async () => {
    const seeded = await seedDemo();
    tokens = { alice: seeded.alice, bob: seeded.bob, carol: seeded.carol };
    stack = await startLiveQueryStack(['Order']);
    live = await startLiveApp(stack);
    brief = await startLiveApp(stack, { mcp: { sessionIdleTimeoutMs: IDLE_MS } });
  }, 90_000);

  afterAll(async () => {
    await live?.app.close();
    await brief?.app.close();
    await stack?.stop();
  });

  async function connect(token: string, url = live.url) {
    const { command, args } = cliCommand(['connect', url]);
    const transport = new StdioClientTransport({
      command,
      args,
      // Only what a desktop user has: the session token, no Parse setting.
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? tmpdir(),
        PARSE_SESSION_TOKEN: token,
      },
      cwd: CLI_CWD,
      stderr: 'pipe',
    });
    let stderr = '';
    (transport.stderr as Readable | null)?.on('data', (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: 'connect-live-test', version: '1.0.0' });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await client.connect(transport);
    return { client, updates, stderr: () => stderr };
  }

  const subs = async (token?: string) => (await stack.counts(token)).subscriptions;
  const socks = async (token?: string) => (await stack.counts(token)).sockets;

  it('alice hears of a new acme order within 1 s through the bridge; bob’s globex order never reaches her', async () => {
    const alice = await connect(tokens.alice);
    try {
      // The bridge passes the server's capabilities through untouched.
      expect(alice.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
      const uri = 'parse://Order/count';
      await alice.client.subscribeResource({ uri });
      // Running on LiveQuery once the bridge's GET stream is open (it opens after initialized).
      await until(async () => (await subs()) === 1, 5000);
      // On her own LiveQuery socket, with her session token: Parse filters by her ACL too.
      expect(await socks(tokens.alice)).toBe(1);

      await createOrder(stack, 'globex');
      await pause(600);
      expect(alice.updates).toEqual([]);

      await notifiedAfterWrite(
        'the update through the bridge',
        () => createOrder(stack, 'acme'),
        () => alice.updates.length >= 1,
      );
      expect(alice.updates).toEqual([uri]);

      // Carol (acme staff) takes an acme order out of the count through /parse with her own session
      // (a soft delete: the canonical filter hides isDeleted rows): alice hears of it too.
      const acme = await createOrder(stack, 'acme');
      await until(() => alice.updates.length === 2, 1000);
      const res = await softDeleteOrder(stack, acme.objectId, tokens.carol);
      expect(res.status).toBe(200);
      await until(() => alice.updates.length === 3, 1000);

      // The re-read through the bridge counts her tenant only.
      const read = await alice.client.readResource({ uri });
      const { count } = JSON.parse(String((read.contents[0] as { text: string }).text)) as {
        count: number;
      };
      expect(count).toBeGreaterThan(0);

      await alice.client.unsubscribeResource({ uri });
      await until(async () => (await subs()) === 0);
      await createOrder(stack, 'acme');
      await pause(400);
      expect(alice.updates).toHaveLength(3);
      expect(alice.stderr()).not.toMatch(/refused its notification stream/);
    } finally {
      await alice.client.close();
    }
  });

  it('bob’s session through the bridge hears of globex only, and closing the client ends its subscriptions', async () => {
    const bob = await connect(tokens.bob);
    const alice = await connect(tokens.alice);
    try {
      await bob.client.subscribeResource({ uri: 'parse://Order/count' });
      await bob.client.subscribeResource({ uri: 'parse://Order/samples' });
      await alice.client.subscribeResource({ uri: 'parse://Order/count' });
      await until(async () => (await subs()) === 3, 5000);

      await createOrder(stack, 'acme');
      await until(() => alice.updates.length === 1, 1000);
      await pause(300);
      expect(bob.updates).toEqual([]);
      await createOrder(stack, 'globex');
      await until(() => bob.updates.length === 2, 1000);
      expect(bob.updates.sort()).toEqual(['parse://Order/count', 'parse://Order/samples']);
      await pause(300);
      expect(alice.updates).toHaveLength(1);

      // The client exits: the bridge sees stdin end, DELETEs the session, and its two
      // subscriptions leave the LiveQuery server while alice's stays.
      await bob.client.close();
      await until(async () => (await subs()) === 1, 5000);
    } finally {
      await bob.client.close().catch(() => undefined);
      await alice.client.close();
    }
    await until(async () => (await subs()) === 0 && (await socks()) === 0, 5000);
  });

  it('when the server lets the session expire, the bridge starts a new one, subscribes again and says to re-read', async () => {
    const alice = await connect(tokens.alice, brief.url);
    try {
      const uri = 'parse://Order/count';
      await alice.client.subscribeResource({ uri });
      await until(async () => (await subs()) === 1, 5000);
      // Alice only listens: her session expires on the server, and its subscription with it...
      await until(async () => (await subs()) === 0, IDLE_MS * 3);
      // ...then the bridge notices (its GET stream is refused), starts a new session, subscribes
      // again and tells the client to re-read what it may have missed.
      await until(async () => (await subs()) === 1, 5000);
      await until(() => alice.updates.includes(uri), 2000);
      expect(alice.stderr()).toMatch(/no longer knows this session; starting a new one/);
      alice.updates.length = 0;

      // The new session is hers: bob's globex order stays silent, an acme order arrives.
      await createOrder(stack, 'globex');
      await pause(500);
      expect(alice.updates).toEqual([]);
      await createOrder(stack, 'acme');
      await until(() => alice.updates.length === 1, 1000);
      expect(alice.updates).toEqual([uri]);
      // Requests keep working on the new session.
      const read = await alice.client.readResource({ uri });
      expect(read.contents).toHaveLength(1);
    } finally {
      await alice.client.close();
    }
    await until(async () => (await subs()) === 0 && (await socks()) === 0, 5000);
  }, 30_000);
});
