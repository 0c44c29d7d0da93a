#!/usr/bin/env node
'use strict';
// `node bench/redis-cost.js`: what Redis costs one tool call.
// - Redis commands per call: those the node sends (counted at the proxy below) and those Redis runs,
//   scripts' own commands included: INFO commandstats deltas on a private redis-server this bench starts
//   (no other client touches it), for a JSON call and a resumable SSE call.
// - Round trips per call: the node reaches Redis through a counting TCP proxy; a round trip is a
//   burst of bytes the node writes after Redis last answered on that connection (a pipeline or a
//   script is one; commands sent side by side on one connection while one is pending count once).
// - calls/s, p50 and p99 of a no-I/O call (bench_echo) at 1 and 16 connections: a node on the
//   in-memory stores against a node on Redis.
// Runs: embedded PostgreSQL, Parse Server, redis-server, four MCP app processes, this generator.
const { spawn } = require('node:child_process');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const { runLoad } = require('./lib/load');
const { withParseStack } = require('./lib/processes');
const { SMOKE, setting, check } = require('./lib/smoke');

const CALLS = setting('BENCH_CALLS', 200, 20);
const SECONDS = setting('BENCH_SECONDS', 8, 0.5);
const WARMUP_MS = SMOKE ? 200 : 2000;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const delay = (ms) => new Promise((r) => setTimeout(r, ms));

/** One command on a fresh connection (RESP), the raw reply. */
function redisCommand(port, ...args) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    const timer = setTimeout(() => (socket.destroy(), reject(new Error('redis timeout'))), 3000);
    socket.on('error', (e) => (clearTimeout(timer), reject(e)));
    socket.on('data', (d) => {
      reply += d.toString('utf8');
      // A bulk string: complete once the announced length has arrived.
      const m = /^\$(\d+)\r\n/.exec(reply);
      if (!m || reply.length >= m[0].length + Number(m[1]) + 2) {
        clearTimeout(timer);
        socket.end();
        resolve(reply);
      }
    });
    socket.write(
      `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`,
    );
  });
}

async function startRedis() {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 50; i++) {
    if ((await redisCommand(port, 'PING').catch(() => '')).startsWith('+PONG'))
      return { port, child };
    await delay(100);
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start (is the redis-server binary installed?)');
}

/** Commands by name since the last CONFIG RESETSTAT (this bench's own INFO/CONFIG left out). */
async function commandStats(port) {
  const info = await redisCommand(port, 'INFO', 'commandstats');
  const stats = {};
  for (const m of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
    if (m[1] !== 'info' && m[1] !== 'config') stats[m[1]] = Number(m[2]);
  }
  return stats;
}

/** A TCP proxy to Redis that counts the node's round trips. */
async function countingProxy(redisPort) {
  const counter = { trips: 0, sent: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(redisPort, '127.0.0.1');
    let waiting = false;
    client.on('data', (d) => {
      if (!waiting) counter.trips++;
      // Top-level RESP arrays: the commands the node sent (a script's own commands are not here).
      counter.sent += (d.toString('latin1').match(/(?:^|\r\n)\*\d+\r\n\$/g) || []).length;
      waiting = true;
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      waiting = false;
      client.write(d);
    });
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  const port = await freePort();
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return { port, counter, close: () => server.close() };
}

function post(port, body, headers) {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `http://127.0.0.1:${port}/mcp`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function sessionOf(port) {
  const res = await post(
    port,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    },
    { accept: 'application/json, text/event-stream' },
  );
  const session = res.headers['mcp-session-id'];
  check(session, `initialize returned no Mcp-Session-Id (${res.status} ${res.body.slice(0, 200)})`);
  await post(
    port,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    {
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session,
    },
  );
  return session;
}

const echoCall = (id, progress) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: {
    name: 'bench_echo',
    arguments: {},
    ...(progress ? { _meta: { progressToken: `p${id}` } } : {}),
  },
});

/** Commands and round trips per call over CALLS sequential calls, less the idle traffic. */
async function costPerCall(node, redis, proxy, sse) {
  const session = await sessionOf(node.info.port);
  const accept = sse ? 'text/event-stream, application/json' : 'application/json';
  const call = async (id) => {
    const res = await post(node.info.port, echoCall(id, sse), {
      accept,
      'mcp-session-id': session,
    });
    const type = String(res.headers['content-type'] || '');
    check(
      res.status === 200 && res.body.includes('"isError":false'),
      `call ${id}: ${res.status} ${res.body.slice(0, 200)}`,
    );
    check(
      type.startsWith(sse ? 'text/event-stream' : 'application/json'),
      `call ${id}: answered as ${type}`,
    );
  };
  for (let i = 0; i < 5; i++) await call(i); // warm
  // Idle traffic (heartbeats, subscriptions) over the same time, to subtract.
  const measureWindow = async (work) => {
    await redisCommand(redis.port, 'CONFIG', 'RESETSTAT');
    const trips0 = proxy.counter.trips;
    const sent0 = proxy.counter.sent;
    const started = Date.now();
    await work();
    const ms = Date.now() - started;
    const stats = await commandStats(redis.port);
    return { ms, trips: proxy.counter.trips - trips0, sent: proxy.counter.sent - sent0, stats };
  };
  const busy = await measureWindow(async () => {
    for (let i = 0; i < CALLS; i++) await call(100 + i);
  });
  const idle = await measureWindow(() => delay(busy.ms));
  const total = (s) => Object.values(s).reduce((a, b) => a + b, 0);
  const byCommand = {};
  for (const [name, n] of Object.entries(busy.stats)) {
    const perCall = (n - (idle.stats[name] ?? 0)) / CALLS;
    if (perCall > 0.01) byCommand[name] = Number(perCall.toFixed(2));
  }
  return {
    commands: Number(((total(busy.stats) - total(idle.stats)) / CALLS).toFixed(2)),
    sent: Number(((busy.sent - idle.sent) / CALLS).toFixed(2)),
    roundTrips: Number(((busy.trips - idle.trips) / CALLS).toFixed(2)),
    byCommand,
  };
}

async function main() {
  const redis = await startRedis();
  const proxy = await countingProxy(redis.port);
  try {
    await withParseStack('bench-redis-cost', async ({ env, start }) => {
      const redisEnv = {
        ...env,
        BENCH_REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        BENCH_REDIS_PREFIX: 'cost:',
      };
      const memory = await start('server.js', env);
      const json = await start('server.js', { ...redisEnv, BENCH_SKIP_SEED: '1' });
      const resumable = await start('server.js', {
        ...redisEnv,
        BENCH_SKIP_SEED: '1',
        BENCH_RESUMABLE: '1',
      });
      // Throughput is measured on a node connected to Redis directly (the proxy adds a hop).
      const direct = await start('server.js', {
        ...env,
        BENCH_REDIS_URL: `redis://127.0.0.1:${redis.port}`,
        BENCH_REDIS_PREFIX: 'direct:',
        BENCH_SKIP_SEED: '1',
      });
      console.log(
        `Machine: ${os.cpus().length} x ${os.cpus()[0].model.trim()}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`,
      );
      console.log(
        `Redis cost per call: ${CALLS} sequential bench_echo calls, idle traffic subtracted.${SMOKE ? ' SMOKE RUN: the figures mean nothing.' : ''}`,
      );
      const result = { smoke: SMOKE };
      for (const [name, node, sse] of [
        ['json', json, false],
        ['sse', resumable, true],
      ]) {
        const cost = await costPerCall(node, redis, proxy, sse);
        result[name] = cost;
        console.log(
          `   ${name === 'json' ? 'JSON call          ' : 'resumable SSE call '}: ${cost.sent} commands sent (${cost.commands} run, scripts' own included), ${cost.roundTrips} round trips  ${JSON.stringify(cost.byCommand)}`,
        );
        check(cost.commands > 0, `${name}: no Redis command counted`);
      }
      console.log(
        `\nbench_echo throughput (${SECONDS}s closed loop after a ${WARMUP_MS / 1000}s warm-up):`,
      );
      for (const connections of [1, 16]) {
        const row = {};
        for (const [name, node] of [
          ['memory', memory],
          ['redis', direct],
        ]) {
          const session = await sessionOf(node.info.port);
          const target = {
            url: `http://127.0.0.1:${node.info.port}/mcp`,
            headers: {
              'content-type': 'application/json',
              accept: 'application/json',
              'mcp-session-id': session,
            },
            body: JSON.stringify(echoCall(1, false)),
            check: (b) => b.includes('"isError":false'),
          };
          await runLoad({ ...target, connections, durationMs: WARMUP_MS });
          const r = await runLoad({ ...target, connections, durationMs: SECONDS * 1000 });
          check(
            r.errors === 0 && r.rps > 0,
            `${name} at ${connections}: ${r.errors} errors, ${r.rps} calls/s`,
          );
          row[name] = { rps: Math.round(r.rps), p50: r.p50, p99: r.p99 };
        }
        const ratio = row.redis.rps / row.memory.rps;
        result[`c${connections}`] = { ...row, ratio: Number(ratio.toFixed(2)) };
        console.log(
          `   ${String(connections).padStart(2)} conn: in-memory ${row.memory.rps} calls/s (p50 ${row.memory.p50} ms, p99 ${row.memory.p99} ms) | Redis ${row.redis.rps} calls/s (p50 ${row.redis.p50} ms, p99 ${row.redis.p99} ms) = ${ratio.toFixed(2)}x`,
        );
      }
      console.log(JSON.stringify(result));
    });
  } finally {
    proxy.close();
    redis.child.kill('SIGKILL');
  }
}

main()
  .then(() => process.exit(0))
  .catch((e) => {
    console.error(e);
    process.exit(1);
  });
