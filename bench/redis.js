#!/usr/bin/env node
'use strict';
// `npm run bench:redis`: tools/call throughput at 16 connections, one node with the in-memory
// stores vs nodes sharing Redis (rate limiter + sessions on Redis, every call carrying the
// Mcp-Session-Id issued by the first node). Needs Redis (BENCH_REDIS_URL, default the local
// service). Runs: embedded PostgreSQL, Parse Server, three MCP app processes, this load generator.
const os = require('node:os');
const crypto = require('node:crypto');
const http = require('node:http');
const { runLoad } = require('./lib/load');
const { withParseStack } = require('./lib/processes');
const { SMOKE, setting, check } = require('./lib/smoke');

const SECONDS = setting('BENCH_SECONDS', 8, 0.5);
const WARMUP_MS = SMOKE ? 200 : 2000;
const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';

async function sessionOf(port) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'bench', version: '1' },
    },
  });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json',
    'content-length': Buffer.byteLength(body),
  };
  return new Promise((resolve, reject) => {
    const req = http.request(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.headers['mcp-session-id']));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function callTarget(port, session, tool) {
  const args = tool === 'query_class' ? { class_name: 'Order', limit: 100 } : {};
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-session-id': session,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: tool, arguments: args },
    }),
    check: (b) => b.includes('"isError":false'),
  };
}

/** Runs loads side by side and sums them (a client-side round-robin over the nodes). */
async function together(targets, connectionsEach, durationMs) {
  const results = await Promise.all(
    targets.map((t) => runLoad({ ...t, connections: connectionsEach, durationMs })),
  );
  return {
    rps: results.reduce((s, r) => s + r.rps, 0),
    errors: results.reduce((s, r) => s + r.errors, 0),
    p50: Math.max(...results.map((r) => r.p50)),
  };
}

async function main() {
  const prefix = `parse-agent-bench:${crypto.randomBytes(4).toString('hex')}:`;
  await withParseStack('bench', async ({ env, start }) => {
    const memory = await start('server.js', env);
    const redisEnv = {
      ...env,
      BENCH_REDIS_URL: REDIS_URL,
      BENCH_REDIS_PREFIX: prefix,
      BENCH_SKIP_SEED: '1',
    };
    const nodeA = await start('server.js', redisEnv);
    const nodeB = await start('server.js', redisEnv);

    const memorySession = await sessionOf(memory.info.port);
    const sharedSession = await sessionOf(nodeA.info.port); // valid on B through Redis
    check(memorySession && sharedSession, 'initialize returned no Mcp-Session-Id');
    console.log(
      `Machine: ${os.cpus().length} x ${os.cpus()[0].model.trim()}, Node ${process.version}; Redis ${REDIS_URL}`,
    );
    console.log(
      `Each measurement: ${SECONDS}s closed loop at 16 connections, after a ${WARMUP_MS / 1000}s warm-up.` +
        `${SMOKE ? ' SMOKE RUN: the figures mean nothing.' : ''}\n`,
    );
    for (const tool of ['bench_echo', 'query_class']) {
      const mem = callTarget(memory.info.port, memorySession, tool);
      const a = callTarget(nodeA.info.port, sharedSession, tool);
      const b = callTarget(nodeB.info.port, sharedSession, tool);
      await runLoad({ ...mem, connections: 16, durationMs: WARMUP_MS });
      await together([a, b], 8, WARMUP_MS);
      const one = await runLoad({ ...mem, connections: 16, durationMs: SECONDS * 1000 });
      const single = await runLoad({ ...a, connections: 16, durationMs: SECONDS * 1000 });
      const two = await together([a, b], 8, SECONDS * 1000);
      const perNode = two.rps / 2;
      console.log(`tools/call ${tool}`);
      console.log(
        `   one node, in-memory stores : ${one.rps.toFixed(0).padStart(6)} req/s (p50 ${one.p50.toFixed(1)} ms) errors ${one.errors}`,
      );
      console.log(
        `   one node, Redis stores     : ${single.rps.toFixed(0).padStart(6)} req/s (p50 ${single.p50.toFixed(1)} ms) = ${(single.rps / one.rps).toFixed(2)}x errors ${single.errors}`,
      );
      console.log(
        `   two nodes on Redis (8+8)   : ${two.rps.toFixed(0).padStart(6)} req/s total, ${perNode.toFixed(0)} per node = ${(perNode / one.rps).toFixed(2)}x per node, ${(two.rps / one.rps).toFixed(2)}x total errors ${two.errors}`,
      );
      // Node B answering with A's session proves the sessions (and limits) are shared.
      const failed = one.errors + single.errors + two.errors;
      check(failed === 0, `${tool}: ${failed} failed or wrong responses`);
      check(one.rps > 0 && single.rps > 0 && two.rps > 0, `${tool}: a load run completed no call`);
    }
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
