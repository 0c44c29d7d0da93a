#!/usr/bin/env node
'use strict';
// `npm run bench`: starts embedded PostgreSQL and the bench server (bench/server.js) in a child
// process, then measures from this process, each pair side by side in one run:
//   1. tools/call query_class (100 rows) over MCP vs the same find sent straight to Parse REST, with
//      bench/minimal-proxy.js (the least an MCP hop must do) as the reference for what the machine
//      allows; at 16 connections BENCH_ROUNDS (default 5) alternating rounds, each ratio the median
//      of the rounds' own ratios
//   2. tools/list vs the official SDK's stateless Streamable HTTP server
//   3. 1,000 concurrent idle SSE streams: server RSS growth and heartbeat punctuality
// BENCH_ONLY (e.g. `1,1b`) runs only the measurements named.
const http = require('node:http');
const os = require('node:os');
const { runLoad, request, median, cpuMs } = require('./lib/load');
const { withParseStack } = require('./lib/processes');
const { SMOKE, setting, check } = require('./lib/smoke');

const SECONDS = setting('BENCH_SECONDS', 8, 0.5);
const STREAMS = setting('BENCH_STREAMS', 1000, 20);
const ROUNDS = setting('BENCH_ROUNDS', 5, 1);
const WARMUP_MS = SMOKE ? 200 : 2000;
// Idle streams are held long enough for a few heartbeats (one in smoke mode).
const HOLD_MS = SMOKE ? 3000 : 9000;

const fmt = (n) => n.toFixed(0).padStart(7);
// BENCH_ONLY=1,1b: only these measurements (1, 1b, 2, 3); all of them when unset.
const ONLY = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
const runs = (measurement) => ONLY.length === 0 || ONLY.includes(measurement);

const KEYS =
  'objectId,createdAt,updatedAt,tenantId,orderNumber,customer,product,quantity,unitPrice,total,status,channel,placedAt';

/** One load run; with `pid`, also the CPU that process spent per call during it (ms). */
async function measured(side, options) {
  const start = side.pid ? cpuMs(side.pid) : 0;
  const run = await runLoad({ ...side, ...options });
  if (side.pid) run.cpuPerCall = (cpuMs(side.pid) - start) / Math.max(1, run.requests + 1);
  return run;
}

async function toolCallVsDirect(info, proxy, pids) {
  const call = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'query_class', arguments: { class_name: 'Order', limit: 100 } },
  });
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json' };
  const sides = {
    // The same find the tool sends: allowlisted keys, the canonical filter, 100 rows, master key.
    direct: {
      url: `${info.serverURL}/classes/Order`,
      headers: {
        'content-type': 'application/json',
        'x-parse-application-id': info.appId,
        'x-parse-master-key': info.masterKey,
      },
      body: JSON.stringify({
        _method: 'GET',
        where: { isDeleted: { $ne: true } },
        keys: KEYS,
        limit: 100,
      }),
      check: (b) => b.includes('"results"'),
    },
    proxy: {
      url: `http://127.0.0.1:${proxy.port}/`,
      headers: mcpHeaders,
      body: call,
      check: (b) => b.includes('"structuredContent"'),
      pid: pids.proxy,
    },
    mcp: {
      url: `http://127.0.0.1:${info.port}/mcp`,
      headers: mcpHeaders,
      body: call,
      check: (b) => b.includes('"isError":false'),
      pid: pids.mcp,
    },
  };
  const rows = [];
  for (const connections of [1, 16]) {
    for (const side of Object.values(sides))
      await runLoad({ ...side, connections, durationMs: WARMUP_MS });
    // Rounds alternate the order, and each side reports its median: on a shared machine a single
    // run says as much about the neighbours as about the code.
    const rounds = connections === 1 ? 1 : ROUNDS;
    const runs = { direct: [], proxy: [], mcp: [] };
    for (let round = 0; round < rounds; round++) {
      // MCP runs next to the direct run it is compared with, before it in one round and after it
      // in the next, so a slow stretch of the machine lands on both sides of the ratio alike.
      const order = round % 2 ? ['proxy', 'mcp', 'direct'] : ['direct', 'mcp', 'proxy'];
      for (const name of order) {
        runs[name].push(await measured(sides[name], { connections, durationMs: SECONDS * 1000 }));
      }
    }
    const pick = (name) => {
      const rps = median(runs[name].map((r) => r.rps));
      const run = runs[name].find((r) => r.rps === rps);
      return { ...run, errors: runs[name].reduce((n, r) => n + r.errors, 0) };
    };
    const direct = pick('direct');
    const proxied = pick('proxy');
    const mcp = pick('mcp');
    // Each ratio compares runs of the same round (seconds apart), then the rounds' median is
    // taken: dividing medians drawn from different rounds would mix different machine states.
    const perRound = runs.mcp.map((m, i) => m.rps / runs.direct[i].rps);
    const proxyPerRound = runs.proxy.map((p, i) => p.rps / runs.direct[i].rps);
    // App CPU per call, MCP app against the minimal proxy, per round (the figure issue 26 targets).
    const cpuPerRound = runs.mcp.map((m, i) => m.cpuPerCall / runs.proxy[i].cpuPerCall);
    rows.push({
      cpu: {
        mcp: median(runs.mcp.map((r) => r.cpuPerCall)),
        proxy: median(runs.proxy.map((r) => r.cpuPerCall)),
        ratio: median(cpuPerRound),
        perRound: cpuPerRound,
      },
      connections,
      rounds,
      direct,
      proxy: proxied,
      mcp,
      ratio: median(perRound),
      proxyRatio: median(proxyPerRound),
      roundRatios: perRound,
      proxyRoundRatios: proxyPerRound,
    });
  }
  return rows;
}

/**
 * A tool that does no I/O (`bench_echo`) over MCP against the minimal proxy's answer to the same
 * call, alternating rounds: app CPU per call and p50 at 1 and 16 connections. The Nest floor
 * (bench/nest-floor.js: one Nest route giving the same answer, no library) runs in the same
 * rounds: what hosting the endpoint in Nest costs before any check.
 */
async function noIoCall(info, proxy, floor, pids) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'bench_echo', arguments: {} },
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  // The three answer the same call with the same body; only where they listen differs.
  const side = (url, pid) => ({
    url,
    headers,
    body,
    pid,
    check: (b) => b.includes('"isError":false'),
  });
  const sides = {
    proxy: side(`http://127.0.0.1:${proxy.port}/`, pids.proxy),
    floor: side(`http://127.0.0.1:${floor.port}/mcp`, pids.floor),
    mcp: side(`http://127.0.0.1:${info.port}/mcp`, pids.mcp),
  };
  const rows = [];
  for (const connections of [1, 16]) {
    for (const side of Object.values(sides))
      await runLoad({ ...side, connections, durationMs: WARMUP_MS });
    const runs = { proxy: [], floor: [], mcp: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 ? ['mcp', 'floor', 'proxy'] : ['proxy', 'floor', 'mcp'])
        runs[name].push(
          await measured(sides[name], { connections, durationMs: (SECONDS * 1000) / 2 }),
        );
    }
    const cpuPerRound = runs.mcp.map((m, i) => m.cpuPerCall / runs.proxy[i].cpuPerCall);
    const side = (name) => ({
      rps: median(runs[name].map((r) => r.rps)),
      p50: median(runs[name].map((r) => r.p50)),
      cpu: median(runs[name].map((r) => r.cpuPerCall)),
      errors: runs[name].reduce((n, r) => n + r.errors, 0),
    });
    rows.push({
      connections,
      proxy: side('proxy'),
      floor: side('floor'),
      mcp: side('mcp'),
      floorRatio: median(runs.floor.map((f, i) => f.cpuPerCall / runs.proxy[i].cpuPerCall)),
      ratio: median(cpuPerRound),
      perRound: cpuPerRound,
    });
  }
  return rows;
}

async function toolsListVsSdk(info, sdkInfo) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const ours = {
    url: `http://127.0.0.1:${info.port}/mcp`,
    headers,
    body,
    check: (b) => b.includes('query_class'),
  };
  const sdk = {
    url: `http://127.0.0.1:${sdkInfo.port}/mcp`,
    headers,
    body,
    check: (b) => b.includes('query_class'),
  };
  await runLoad({ ...ours, connections: 16, durationMs: WARMUP_MS });
  await runLoad({ ...sdk, connections: 16, durationMs: WARMUP_MS });
  const o = await runLoad({ ...ours, connections: 16, durationMs: SECONDS * 1000 });
  const s = await runLoad({ ...sdk, connections: 16, durationMs: SECONDS * 1000 });
  return { ours: o, sdk: s, ratio: o.rps / s.rps };
}

async function rss(info) {
  const res = await request(undefined, `http://127.0.0.1:${info.port}/bench/rss`, {
    method: 'GET',
    headers: {},
  });
  return JSON.parse(res.body.toString()).rss;
}

async function idleStreams(info) {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const before = await rss(info);
  const heartbeatMs = 2000;
  const holdMs = HOLD_MS;
  const streams = [];
  const opened = Date.now();
  for (let i = 0; i < STREAMS; i++) {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'bench_wait', arguments: { ms: 60_000 }, _meta: { progressToken: `s${i}` } },
    });
    const stream = { beats: [], status: 0, req: undefined };
    stream.req = http.request(
      `http://127.0.0.1:${info.port}/mcp`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        stream.status = res.statusCode;
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          for (const line of chunk.split('\n')) {
            if (line.startsWith('data:') && line.includes('notifications/progress'))
              stream.beats.push(Date.now());
          }
        });
        res.on('error', () => undefined);
      },
    );
    stream.req.on('error', () => undefined);
    stream.req.end(body);
    streams.push(stream);
  }
  await new Promise((r) => setTimeout(r, holdMs));
  const during = await rss(info);
  const open = streams.filter((s) => s.status === 200).length;
  // Heartbeat punctuality: gaps between consecutive beats, and the first beat after opening.
  const gaps = [];
  for (const s of streams)
    for (let i = 1; i < s.beats.length; i++) gaps.push(s.beats[i] - s.beats[i - 1]);
  gaps.sort((a, b) => a - b);
  const beatsPerStream = streams.map((s) => s.beats.length);
  for (const s of streams) s.req.destroy();
  agent.destroy();
  await new Promise((r) => setTimeout(r, 1500));
  const after = await rss(info);
  return {
    streams: STREAMS,
    open,
    rssBeforeMb: before / 2 ** 20,
    rssDuringMb: during / 2 ** 20,
    rssAfterCloseMb: after / 2 ** 20,
    growthMb: (during - before) / 2 ** 20,
    minBeats: Math.min(...beatsPerStream),
    gapP50: gaps[Math.floor(gaps.length * 0.5)] ?? NaN,
    gapP99: gaps[Math.floor(gaps.length * 0.99)] ?? NaN,
    gapMax: gaps[gaps.length - 1] ?? NaN,
  };
}

async function main() {
  await withParseStack('bench', async ({ env, start }) => {
    const server = await start('server.js', env);
    const proxy = await start('minimal-proxy.js', { ...env, BENCH_KEYS: KEYS });
    const { info } = server;
    const sdk = await start('sdk-server.js', {
      BENCH_MCP_URL: `http://127.0.0.1:${info.port}/mcp`,
    });
    const machine = `${os.cpus().length} x ${os.cpus()[0].model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
    console.log(`Machine: ${machine}`);
    console.log(
      'Processes: PostgreSQL (embedded), Parse Server, the MCP app (Nest + library), this load generator.',
    );
    console.log(
      `Each measurement: ${SECONDS}s closed loop, after a ${WARMUP_MS / 1000}s warm-up.${SMOKE ? ' SMOKE RUN: the figures mean nothing.' : ''}\n`,
    );

    const errors = [];
    const floor = await start('nest-floor.js', {});
    const pids = { mcp: server.child.pid, proxy: proxy.child.pid, floor: floor.child.pid };
    const s = { open: 0, streams: 0, minBeats: 1 };
    const cpuTarget = (ratio) =>
      ratio <= 1.5 ? '  [target <= 1.5x met]' : '  [target <= 1.5x NOT met]';
    if (runs('1')) {
      console.log('1. tools/call query_class (100 rows) over MCP vs the same find on Parse REST');
      console.log(
        '   (reference: a minimal node:http proxy doing only the work MCP requires, bench/minimal-proxy.js)',
      );
      for (const r of await toolCallVsDirect(info, proxy.info, pids)) {
        errors.push(r.direct.errors, r.proxy.errors, r.mcp.errors);
        const target =
          r.connections === 16
            ? r.ratio >= 0.95
              ? '  [target 0.95x met]'
              : '  [target 0.95x NOT met]'
            : '';
        console.log(
          `   ${String(r.connections).padStart(2)} conn${r.rounds > 1 ? ` (${r.rounds} rounds, medians)` : ''}:` +
            ` direct ${fmt(r.direct.rps)} req/s (p50 ${r.direct.p50.toFixed(1)} ms)` +
            ` | minimal proxy ${fmt(r.proxy.rps)} req/s (p50 ${r.proxy.p50.toFixed(1)} ms) = ${r.proxyRatio.toFixed(2)}x` +
            ` | MCP ${fmt(r.mcp.rps)} req/s (p50 ${r.mcp.p50.toFixed(1)} ms) = ${r.ratio.toFixed(2)}x${target}` +
            ` errors ${r.direct.errors}/${r.proxy.errors}/${r.mcp.errors}`,
        );
        if (r.rounds > 1) {
          const list = (xs) => xs.map((x) => x.toFixed(2)).join(', ');
          console.log(`      MCP/direct per round: ${list(r.roundRatios)}`);
          console.log(`      minimal proxy/direct per round: ${list(r.proxyRoundRatios)}`);
        }
        console.log(
          `      app CPU per call: MCP ${r.cpu.mcp.toFixed(3)} ms | minimal proxy ${r.cpu.proxy.toFixed(3)} ms` +
            ` = ${r.cpu.ratio.toFixed(2)}x${cpuTarget(r.cpu.ratio)}` +
            (r.rounds > 1
              ? ` (per round: ${r.cpu.perRound.map((x) => x.toFixed(2)).join(', ')})`
              : ''),
        );
      }
    }
    if (runs('1b')) {
      console.log(
        "\n1b. tools/call bench_echo (no I/O) over MCP vs the minimal proxy's answer to it",
      );
      for (const r of await noIoCall(info, proxy.info, floor.info, pids)) {
        errors.push(r.proxy.errors, r.floor.errors, r.mcp.errors);
        console.log(
          `   ${String(r.connections).padStart(2)} conn (${ROUNDS} rounds, medians):` +
            ` minimal proxy ${fmt(r.proxy.rps)} req/s (p50 ${r.proxy.p50.toFixed(1)} ms, ${r.proxy.cpu.toFixed(3)} ms CPU/call)` +
            ` | MCP ${fmt(r.mcp.rps)} req/s (p50 ${r.mcp.p50.toFixed(1)} ms, ${r.mcp.cpu.toFixed(3)} ms CPU/call)` +
            ` | CPU ratio ${r.ratio.toFixed(2)}x${cpuTarget(r.ratio)} errors ${r.proxy.errors}/${r.mcp.errors}`,
        );
        console.log(
          `      Nest floor (one Nest route, no library): ${fmt(r.floor.rps)} req/s, ${r.floor.cpu.toFixed(3)} ms CPU/call` +
            ` = ${r.floorRatio.toFixed(2)}x the proxy; MCP is ${(r.mcp.cpu / r.floor.cpu).toFixed(2)}x the floor errors ${r.floor.errors}`,
        );
      }
    }
    if (runs('2')) {
      console.log(
        '\n2. tools/list vs the official SDK stateless Streamable HTTP server (16 connections)',
      );
      const tl = await toolsListVsSdk(info, sdk.info);
      errors.push(tl.ours.errors, tl.sdk.errors);
      console.log(
        `   ours ${fmt(tl.ours.rps)} req/s | SDK ${fmt(tl.sdk.rps)} req/s | ratio ${tl.ratio.toFixed(2)}x` +
          `${tl.ratio >= 4 ? '  [target 4x met]' : '  [target 4x NOT met]'} errors ${tl.ours.errors}/${tl.sdk.errors}`,
      );
    }
    if (runs('3')) {
      console.log(`\n3. ${STREAMS} concurrent idle SSE streams (heartbeat every 2 s)`);
      Object.assign(s, await idleStreams(info));
      console.log(
        `   open ${s.open}/${s.streams} | RSS ${s.rssBeforeMb.toFixed(0)} MB -> ${s.rssDuringMb.toFixed(0)} MB (growth ${s.growthMb.toFixed(0)} MB` +
          `${s.growthMb <= 150 ? ', target <= 150 MB met' : ', target <= 150 MB NOT met'}) | after close ${s.rssAfterCloseMb.toFixed(0)} MB`,
      );
      console.log(
        `   heartbeat gaps: p50 ${s.gapP50} ms, p99 ${s.gapP99} ms, max ${s.gapMax} ms; fewest beats on one stream ${s.minBeats} in ${HOLD_MS / 1000} s`,
      );
    }
    // A run with errors, closed streams or missing heartbeats measured something else.
    const total = errors.reduce((n, e) => n + e, 0);
    check(total === 0, `${total} failed or wrong responses in the load runs`);
    check(s.open === s.streams, `only ${s.open} of ${s.streams} SSE streams opened`);
    check(s.minBeats >= 1, 'a stream received no heartbeat');
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
