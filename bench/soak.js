#!/usr/bin/env node
'use strict';
// `npm run bench:soak`: a long mixed load against the MCP app (same processes as `npm run bench`),
// to catch slow leaks and tail-latency drift that short runs hide. Defaults: 10 minutes at 32
// connections. Memory (RSS, heap used after a forced GC) is sampled every 10 s; the slope is fitted
// over the samples after the warm-up, and latency is reported per minute.
const os = require('node:os');
const { request } = require('./lib/load');
const { withParseStack } = require('./lib/processes');
const { SMOKE, setting, check } = require('./lib/smoke');

const MINUTES = setting('SOAK_MINUTES', 10, 3);
const CONNECTIONS = setting('SOAK_CONNECTIONS', 32, 8);
const WARMUP_MINUTES = setting('SOAK_WARMUP_MINUTES', 2, 1);
// Smoke mode: each "minute" of load lasts one second, sampled every 250 ms.
const MINUTE_S = SMOKE ? 1 : 60;
const SAMPLE_MS = SMOKE ? 250 : 10_000;

const call = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const tool = (id, name, args) => call(id, 'tools/call', { name, arguments: args });

// The mix: list, schema, counts, row reads of different sizes, all schemas and a refused call.
const MIX = [
  call(1, 'tools/list', {}),
  tool(2, 'query_class', { class_name: 'Order', limit: 100 }),
  tool(3, 'query_class', { class_name: 'Order', where: { status: 'paid' }, limit: 20 }),
  tool(4, 'count_objects', { class_name: 'Order', where: { status: 'paid' } }),
  tool(5, 'get_schema', { class_name: 'Order' }),
  tool(6, 'get_sample_objects', { class_name: 'Customer', limit: 5 }),
  tool(7, 'get_all_schemas', {}),
  tool(8, 'query_class', { class_name: 'NoSuchClass' }),
  call(9, 'resources/list', {}),
];

async function memory(info) {
  const res = await request(undefined, `http://127.0.0.1:${info.port}/bench/mem`, {
    method: 'GET',
    headers: {},
  });
  return JSON.parse(res.body.toString());
}

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return num / den;
}

async function minuteOfLoad(info) {
  const autocannon = require('autocannon');
  const result = await autocannon({
    url: `http://127.0.0.1:${info.port}/mcp`,
    connections: CONNECTIONS,
    duration: MINUTE_S,
    requests: MIX.map((body) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    })),
  });
  return {
    requests: result.requests.total,
    rps: result.requests.total / MINUTE_S,
    errors: result.errors + result.timeouts + result.non2xx,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
  };
}

async function main() {
  await withParseStack('soak', async ({ env, start }) => {
    const server = await start('server.js', env, ['--expose-gc']);
    const { info } = server;
    console.log(
      `Machine: ${os.cpus().length} x ${os.cpus()[0].model.trim()}, Node ${process.version}; ` +
        `${MINUTES} min at ${CONNECTIONS} connections, ${MIX.length}-call mix, warm-up ${WARMUP_MINUTES} min` +
        (SMOKE ? ' (SMOKE RUN: each minute lasts 1 s; the figures mean nothing)' : ''),
    );
    const samples = [];
    const started = Date.now();
    const sampler = setInterval(() => {
      memory(info).then(
        (m) => samples.push({ t: (Date.now() - started) / (MINUTE_S * 1000), ...m }),
        () => undefined,
      );
    }, SAMPLE_MS);
    const minutes = [];
    for (let i = 0; i < MINUTES; i++) {
      const m = await minuteOfLoad(info);
      const mem = samples[samples.length - 1];
      minutes.push(m);
      console.log(
        `  min ${String(i + 1).padStart(2)}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, max ${m.max} ms, errors ${m.errors}` +
          (mem
            ? ` | RSS ${(mem.rss / 2 ** 20).toFixed(0)} MB, heap ${(mem.heapUsed / 2 ** 20).toFixed(1)} MB`
            : ''),
      );
    }
    clearInterval(sampler);
    const settled = samples.filter((s) => s.t >= WARMUP_MINUTES);
    const rssSlope = slope(settled.map((s) => ({ x: s.t, y: s.rss / 2 ** 20 })));
    const heapSlope = slope(settled.map((s) => ({ x: s.t, y: s.heapUsed / 2 ** 20 })));
    const after = minutes.slice(WARMUP_MINUTES);
    const p99s = after.map((m) => m.p99);
    const total = minutes.reduce((s, m) => s + m.requests, 0);
    const errors = minutes.reduce((s, m) => s + m.errors, 0);
    console.log(
      `\nAfter warm-up: RSS slope ${rssSlope.toFixed(2)} MB/min, heap slope ${heapSlope.toFixed(2)} MB/min ` +
        `(${settled.length} samples); p99 per minute ${Math.min(...p99s)}-${Math.max(...p99s)} ms; ` +
        `${total} requests, ${errors} non-2xx/errors`,
    );
    console.log(JSON.stringify({ rssSlope, heapSlope, p99s, total, errors, samples }));
    check(errors === 0, `${errors} failed or non-2xx responses`);
    check(total > 0, 'the load completed no request');
    check(settled.length >= 2 && Number.isFinite(heapSlope), 'too few memory samples for a slope');
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
