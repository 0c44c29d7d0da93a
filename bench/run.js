#!/usr/bin/env node
'use strict';
// `npm run bench`: starts embedded PostgreSQL and the bench server (bench/server.js) in a child
// process, then measures from this process, each pair side by side in one run:
//   1. tools/call query_class (100 rows) over MCP vs the same find sent straight to Parse REST
//   2. tools/list vs the official SDK's stateless Streamable HTTP server
//   3. 1,000 concurrent idle SSE streams: server RSS growth and heartbeat punctuality
const { spawn } = require('node:child_process');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');
const { runLoad, request } = require('./lib/load');
const { startEmbeddedPostgres } = require('../dist/src/embedded/embedded-postgres');

const SECONDS = Number(process.env.BENCH_SECONDS || 8);
const STREAMS = Number(process.env.BENCH_STREAMS || 1000);

function startProcess(script, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, script)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      const line = buffer.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) resolve({ child, info: JSON.parse(line) });
    });
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

const fmt = (n) => n.toFixed(0).padStart(7);

async function toolCallVsDirect(info) {
  const mcpBody = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'query_class', arguments: { class_name: 'Order', limit: 100 } },
  });
  const mcp = {
    url: `http://127.0.0.1:${info.port}/mcp`,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: mcpBody,
    check: (b) => b.includes('"isError":false'),
  };
  // The same find the tool sends: allowlisted keys, the canonical filter, 100 rows, master key.
  const keys = 'objectId,createdAt,updatedAt,tenantId,orderNumber,customer,product,quantity,unitPrice,total,status,channel,placedAt';
  const direct = {
    url: `${info.serverURL}/classes/Order`,
    headers: {
      'content-type': 'application/json',
      'x-parse-application-id': info.appId,
      'x-parse-master-key': info.masterKey,
    },
    body: JSON.stringify({ _method: 'GET', where: { isDeleted: { $ne: true } }, keys, limit: 100 }),
    check: (b) => b.includes('"results"'),
  };
  const rows = [];
  for (const connections of [1, 16]) {
    // warm-up, then measure each side in turn
    await runLoad({ ...direct, connections, durationMs: 2000 });
    await runLoad({ ...mcp, connections, durationMs: 2000 });
    const d = await runLoad({ ...direct, connections, durationMs: SECONDS * 1000 });
    const m = await runLoad({ ...mcp, connections, durationMs: SECONDS * 1000 });
    rows.push({ connections, direct: d, mcp: m, ratio: m.rps / d.rps });
  }
  return rows;
}

async function toolsListVsSdk(info) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const ours = { url: `http://127.0.0.1:${info.port}/mcp`, headers, body, check: (b) => b.includes('query_class') };
  const sdk = { url: `http://127.0.0.1:${info.sdkPort}/mcp`, headers, body, check: (b) => b.includes('query_class') };
  await runLoad({ ...ours, connections: 16, durationMs: 2000 });
  await runLoad({ ...sdk, connections: 16, durationMs: 2000 });
  const o = await runLoad({ ...ours, connections: 16, durationMs: SECONDS * 1000 });
  const s = await runLoad({ ...sdk, connections: 16, durationMs: SECONDS * 1000 });
  return { ours: o, sdk: s, ratio: o.rps / s.rps };
}

async function rss(info) {
  const res = await request(undefined, `http://127.0.0.1:${info.port}/bench/rss`, { method: 'GET', headers: {} });
  return JSON.parse(res.body.toString()).rss;
}

async function idleStreams(info) {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const before = await rss(info);
  const heartbeatMs = 2000;
  const holdMs = 9000;
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
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        stream.status = res.statusCode;
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          for (const line of chunk.split('\n')) {
            if (line.startsWith('data:') && line.includes('notifications/progress')) stream.beats.push(Date.now());
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
  for (const s of streams) for (let i = 1; i < s.beats.length; i++) gaps.push(s.beats[i] - s.beats[i - 1]);
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
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'parse-agent-bench-'));
  fs.chmodSync(tmp, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), fast: true });
  let server;
  let parse;
  try {
    parse = await startProcess('parse-server.js', { BENCH_DATABASE_URI: pg.uri });
    server = await startProcess('server.js', {
      BENCH_PARSE_URL: parse.info.serverURL,
      BENCH_APP_ID: parse.info.appId,
      BENCH_MASTER_KEY: parse.info.masterKey,
    });
    const { info } = server;
    const machine = `${os.cpus().length} x ${os.cpus()[0].model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
    console.log(`Machine: ${machine}`);
    console.log('Processes: PostgreSQL (embedded), Parse Server, the MCP app (Nest + library), this load generator.');
    console.log(`Each measurement: ${SECONDS}s closed loop, after a 2s warm-up.\n`);

    console.log('1. tools/call query_class (100 rows) over MCP vs the same find on Parse REST');
    for (const r of await toolCallVsDirect(info)) {
      console.log(
        `   ${String(r.connections).padStart(2)} conn: direct ${fmt(r.direct.rps)} req/s (p50 ${r.direct.p50.toFixed(1)} ms)` +
          ` | MCP ${fmt(r.mcp.rps)} req/s (p50 ${r.mcp.p50.toFixed(1)} ms) | ratio ${r.ratio.toFixed(2)}x` +
          `${r.connections === 16 ? (r.ratio >= 0.85 ? '  [target 0.85x met]' : '  [target 0.85x NOT met]') : ''}` +
          ` errors ${r.direct.errors}/${r.mcp.errors}`,
      );
    }
    console.log('\n2. tools/list vs the official SDK stateless Streamable HTTP server (16 connections)');
    const tl = await toolsListVsSdk(info);
    console.log(
      `   ours ${fmt(tl.ours.rps)} req/s | SDK ${fmt(tl.sdk.rps)} req/s | ratio ${tl.ratio.toFixed(2)}x` +
        `${tl.ratio >= 4 ? '  [target 4x met]' : '  [target 4x NOT met]'} errors ${tl.ours.errors}/${tl.sdk.errors}`,
    );
    console.log(`\n3. ${STREAMS} concurrent idle SSE streams (heartbeat every 2 s)`);
    const s = await idleStreams(info);
    console.log(
      `   open ${s.open}/${s.streams} | RSS ${s.rssBeforeMb.toFixed(0)} MB -> ${s.rssDuringMb.toFixed(0)} MB (growth ${s.growthMb.toFixed(0)} MB` +
        `${s.growthMb <= 150 ? ', target <= 150 MB met' : ', target <= 150 MB NOT met'}) | after close ${s.rssAfterCloseMb.toFixed(0)} MB`,
    );
    console.log(
      `   heartbeat gaps: p50 ${s.gapP50} ms, p99 ${s.gapP99} ms, max ${s.gapMax} ms; fewest beats on one stream ${s.minBeats} in 9 s`,
    );
  } finally {
    if (server) server.child.kill('SIGKILL');
    if (parse) parse.child.kill('SIGKILL');
    await pg.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
