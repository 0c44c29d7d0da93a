#!/usr/bin/env node
'use strict';
// `npm run bench:live`: MCP resource subscriptions on Parse LiveQuery. Starts the demo (embedded
// PostgreSQL, Parse Server with LiveQuery on the app's HTTP server, the MCP endpoint), opens
// BENCH_SESSIONS sessions of one user (alice) with the official SDK client, each subscribing to
// BENCH_SUBS resources of Order, then writes orders through Parse REST (/parse) and times each
// write to every session's notifications/resources/updated. Prints latency p50/p99, the app's
// memory per subscription and the LiveQuery connections each user holds.
const { spawn } = require('node:child_process');
const { mkdtempSync, chmodSync, rmSync } = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { readFileSync } = require('node:fs');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const {
  StreamableHTTPClientTransport,
} = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ResourceUpdatedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');
const { SMOKE, setting, check } = require('./lib/smoke');

const SESSIONS = setting('BENCH_SESSIONS', 100, 3);
const SUBS = setting('BENCH_SUBS', 10, 2);
const WRITES = setting('BENCH_WRITES', 30, 3);
// At most 8 open GET streams per user (mcp.maxGetStreamsPerPrincipal): 8 sessions per user.
const USERS = Math.max(1, Math.ceil(SESSIONS / 8));
const ROOT = path.join(__dirname, '..');
const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'refunded', 'cancelled'];

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rssKb = (pid) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
/** Retries a call the demo's pre-authentication limit refused (600 requests a minute per address). */
async function patiently(call) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!/Too Many Requests/.test(String(error?.message)) || attempt > 30) throw error;
      await sleep(2000);
    }
  }
}
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

function uris(n) {
  const list = ['parse://Order/count', 'parse://Order/samples'];
  for (const status of STATUSES) {
    list.push(`parse://Order/query?where=${encodeURIComponent(JSON.stringify({ status }))}`);
  }
  for (const channel of ['web', 'mobile', 'store']) {
    list.push(`parse://Order/query?where=${encodeURIComponent(JSON.stringify({ channel }))}`);
  }
  return list.slice(0, n);
}

async function main() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-live-'));
  chmodSync(dataDir, 0o755);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // The demo from its sources (the test harness's transpile-only loader maps the library to its
  // sources), so the bench measures this checkout without a build.
  const entry = [
    '-r',
    path.join(ROOT, 'test/harness/ts-register.js'),
    path.join(ROOT, 'src/main.ts'),
  ];
  const app = spawn(process.execPath, entry, {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      MCP_API_KEY: 'bench-live',
      MCP_RATE_LIMIT: '100000',
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  app.stdout.on('data', (c) => (log += c));
  app.stderr.on('data', (c) => (log += c));
  const clients = [];
  try {
    for (let i = 0; ; i++) {
      if (i > 240) throw new Error(`the demo did not start:\n${log.slice(-2000)}`);
      await sleep(500);
      const health = await fetch(`${base}/health/ready`).catch(() => undefined);
      if (health?.ok && /resource subscriptions are available/.test(log)) break;
    }
    const secrets = JSON.parse(readFileSync(path.join(dataDir, 'demo-secrets.json'), 'utf8'));
    const master = { 'X-Parse-Master-Key': secrets.masterKey };
    const rest = (method, p, body, headers = {}) =>
      fetch(`${base}/parse${p}`, {
        method,
        headers: {
          'X-Parse-Application-Id': secrets.appId,
          'Content-Type': 'application/json',
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then((r) => r.json());
    // Acme staff users, at most 8 sessions each (each session holds one GET stream).
    const role = (
      await rest(
        'GET',
        `/roles?where=${encodeURIComponent('{"name":"acme-staff"}')}`,
        undefined,
        master,
      )
    ).results[0];
    const tokens = [];
    for (let u = 0; u < USERS; u++) {
      const username = `bench-live-${u}`;
      const user = await rest('POST', '/users', { username, password: 'bench-password' });
      check(typeof user.objectId === 'string', `sign-up failed: ${JSON.stringify(user)}`);
      await rest(
        'PUT',
        `/roles/${role.objectId}`,
        {
          users: {
            __op: 'AddRelation',
            objects: [{ __type: 'Pointer', className: '_User', objectId: user.objectId }],
          },
        },
        master,
      );
      tokens.push(user.sessionToken);
    }

    const latencies = [];
    let pending;
    const open = async (i) => {
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${tokens[i % USERS]}` } },
      });
      const client = new Client({ name: 'bench-live', version: '1' });
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        if (pending && n.params.uri === 'parse://Order/count' && !pending.seen.has(i)) {
          pending.seen.add(i);
          latencies.push(Date.now() - pending.at);
        }
      });
      try {
        await client.connect(transport);
      } catch (error) {
        await client.close().catch(() => undefined);
        throw error;
      }
      return client;
    };
    for (let i = 0; i < SESSIONS; i++) {
      // The demo admits 600 requests a minute per client address before authentication: paced
      // under it (initialize, initialized, the GET stream), in full runs only.
      if (!SMOKE) await sleep(350);
      clients.push(await patiently(() => open(i)));
    }
    await sleep(500);
    const before = rssKb(app.pid);
    for (const client of clients) {
      for (const uri of uris(SUBS)) {
        if (!SMOKE) await sleep(110);
        await patiently(() => client.subscribeResource({ uri }));
      }
    }
    await sleep(1000);
    const after = rssKb(app.pid);

    for (let w = 0; w < WRITES; w++) {
      pending = { at: Date.now(), seen: new Set() };
      await rest(
        'POST',
        '/classes/Order',
        {
          tenantId: 'acme',
          orderNumber: `ACME-BENCH-${w}`,
          quantity: 1,
          unitPrice: 1,
          total: 1,
          status: 'paid',
          channel: 'web',
          isDeleted: false,
          ACL: { 'role:acme-staff': { read: true, write: true } },
        },
        master,
      );
      for (let i = 0; i < 100 && pending.seen.size < SESSIONS; i++) await sleep(20);
      check(
        pending.seen.size === SESSIONS,
        `write ${w}: ${pending.seen.size}/${SESSIONS} sessions notified`,
      );
      await sleep(150); // past the debounce window, so the next write starts a new burst
    }
    latencies.sort((a, b) => a - b);
    const result = {
      bench: 'live-query',
      smoke: SMOKE,
      sessions: SESSIONS,
      subscriptionsPerSession: SUBS,
      subscriptions: SESSIONS * SUBS,
      writes: WRITES,
      notifications: latencies.length,
      latencyMs: {
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        max: latencies.at(-1),
      },
      rssKbPerSubscription: Number(((after - before) / (SESSIONS * SUBS)).toFixed(2)),
      users: USERS,
      // By construction (one LiveQueryClient per identity); test/live checks it on the server.
      liveQueryConnectionsPerUser: 1,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    app.kill('SIGTERM');
    await new Promise((resolve) => app.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
