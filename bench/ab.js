'use strict';
// `npm run bench:ab`: the MCP app's CPU per tools/call for two builds, side by side. One embedded
// PostgreSQL and one Parse Server (own process) serve two MCP apps: a built checkout of the commit
// to compare with (BENCH_BEFORE_DIR, made as for bench:tokens) and this tree. Closed-loop runs
// alternate between the two (the order flips every round) and each side reports its median
// req/s and the app process's CPU milliseconds per call, read from /proc. On a shared machine
// the CPU per call moves far less between runs than throughput does, so it is the figure to
// compare. BENCH_TOOL / BENCH_ARGS pick the call (default query_class on 100 orders),
// BENCH_ROUNDS (default 4), BENCH_SECONDS (default 5) and BENCH_CONNECTIONS (default 16) the load.
const fs = require('node:fs');
const path = require('node:path');
const { runLoad, median } = require('./lib/load');
const { withParseStack } = require('./lib/processes');
const { SMOKE, setting, check } = require('./lib/smoke');

// Smoke mode without a checkout to compare with: this tree against itself.
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR || (SMOKE ? path.join(__dirname, '..') : undefined);
const TOOL = process.env.BENCH_TOOL || 'query_class';
const ARGS = JSON.parse(process.env.BENCH_ARGS || '{"class_name":"Order","limit":100}');
const ROUNDS = setting('BENCH_ROUNDS', 4, 1);
const SECONDS = setting('BENCH_SECONDS', 5, 0.5);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 16, 4);
const WARMUP_MS = SMOKE ? 200 : 2000;

/** CPU time (user + system, all threads) of a process so far, in ms (Linux). */
function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
}

async function main() {
  if (!BEFORE_DIR) {
    throw new Error(
      'Set BENCH_BEFORE_DIR to a built checkout of the commit to compare with (see bench/README.md).',
    );
  }
  await withParseStack('ab', async ({ env, start }) => {
    const before = await start(path.relative(__dirname, path.join(BEFORE_DIR, 'bench', 'server.js')), env);
    const after = await start('server.js', { ...env, BENCH_SKIP_SEED: '1' });
    const sides = { before, after };
    const load = ({ info }) => ({
      url: `http://127.0.0.1:${info.port}/mcp`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: TOOL, arguments: ARGS },
      }),
      check: (b) => b.includes('"isError":false'),
    });
    console.log(
      `${TOOL} ${JSON.stringify(ARGS)}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per side` +
        (SMOKE ? ' (SMOKE RUN: the figures mean nothing)' : ''),
    );
    for (const side of Object.values(sides))
      await runLoad({ ...load(side), connections: CONNECTIONS, durationMs: WARMUP_MS });
    const results = { before: [], after: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 ? ['after', 'before'] : ['before', 'after']) {
        const side = sides[name];
        const start = cpuMs(side.child.pid);
        const run = await runLoad({
          ...load(side),
          connections: CONNECTIONS,
          durationMs: SECONDS * 1000,
        });
        const perCall = (cpuMs(side.child.pid) - start) / run.requests;
        results[name].push({ rps: run.rps, perCall, errors: run.errors });
        console.log(
          `  round ${round + 1} ${name.padEnd(6)} ${run.rps.toFixed(0).padStart(6)} req/s  ${perCall.toFixed(3)} ms CPU/call  errors ${run.errors}`,
        );
      }
    }
    const summary = (name) => ({
      rps: median(results[name].map((r) => r.rps)),
      perCall: median(results[name].map((r) => r.perCall)),
      errors: results[name].reduce((n, r) => n + r.errors, 0),
    });
    const b = summary('before');
    const a = summary('after');
    console.log(
      `before: ${b.rps.toFixed(0)} req/s, ${b.perCall.toFixed(3)} ms CPU/call (medians), errors ${b.errors}`,
    );
    console.log(
      `after:  ${a.rps.toFixed(0)} req/s, ${a.perCall.toFixed(3)} ms CPU/call (medians), errors ${a.errors}`,
    );
    console.log(`CPU per call: ${((a.perCall / b.perCall - 1) * 100).toFixed(1)}%`);
    check(a.errors === 0 && b.errors === 0, `failed or wrong responses: before ${b.errors}, after ${a.errors}`);
    check(a.perCall > 0 && b.perCall > 0, 'no CPU per call measured (did any call complete?)');
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
