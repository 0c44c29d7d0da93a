'use strict';
// `npm run bench:fastify`: the same MCP app on Nest's two HTTP platforms, side by side. One
// embedded PostgreSQL and one Parse Server (own process) serve two bench servers (bench/server.js),
// one on @nestjs/platform-express and one on @nestjs/platform-fastify. Closed-loop runs alternate
// between them (the order flips every round); each side reports its median req/s and the app
// process's CPU milliseconds per call, read from /proc, for query_class (100 orders) and for a
// call that does no I/O (bench_echo). BENCH_ROUNDS (default 4), BENCH_SECONDS (default 5) and
// BENCH_CONNECTIONS (default 16) set the load; BENCH_SMOKE=1 runs it for seconds.
const fs = require('node:fs');
const { runLoad, median } = require('./lib/load');
const { withParseStack } = require('./lib/processes');
const { SMOKE, setting, check } = require('./lib/smoke');

const ROUNDS = setting('BENCH_ROUNDS', 4, 1);
const SECONDS = setting('BENCH_SECONDS', 5, 0.5);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 16, 4);
const WARMUP_MS = SMOKE ? 200 : 2000;
const PLATFORMS = ['express', 'fastify'];
const CALLS = [
  { tool: 'query_class', args: { class_name: 'Order', limit: 100 } },
  { tool: 'bench_echo', args: {} },
];

/** CPU time (user + system, all threads) of a process so far, in ms (Linux). */
function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
}

function load({ info }, { tool, args }) {
  return {
    url: `http://127.0.0.1:${info.port}/mcp`,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: tool, arguments: args },
    }),
    check: (b) => b.includes('"isError":false'),
  };
}

async function main() {
  await withParseStack('fastify', async ({ env, start }) => {
    const sides = {
      express: await start('server.js', { ...env, BENCH_PLATFORM: 'express' }),
      fastify: await start('server.js', { ...env, BENCH_PLATFORM: 'fastify', BENCH_SKIP_SEED: '1' }),
    };
    console.log(
      `Express vs Fastify: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per side and call` +
        (SMOKE ? ' (SMOKE RUN: the figures mean nothing)' : ''),
    );
    const table = [];
    for (const call of CALLS) {
      for (const name of PLATFORMS)
        await runLoad({ ...load(sides[name], call), connections: CONNECTIONS, durationMs: WARMUP_MS });
      const results = { express: [], fastify: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of round % 2 ? [...PLATFORMS].reverse() : PLATFORMS) {
          const side = sides[name];
          const before = cpuMs(side.child.pid);
          const run = await runLoad({
            ...load(side, call),
            connections: CONNECTIONS,
            durationMs: SECONDS * 1000,
          });
          const perCall = (cpuMs(side.child.pid) - before) / Math.max(1, run.requests);
          results[name].push({ rps: run.rps, perCall, errors: run.errors });
          console.log(
            `  ${call.tool.padEnd(11)} round ${round + 1} ${name.padEnd(7)} ${run.rps.toFixed(0).padStart(6)} req/s  ${perCall.toFixed(3)} ms CPU/call  errors ${run.errors}`,
          );
        }
      }
      for (const name of PLATFORMS) {
        table.push({
          call: call.tool,
          platform: name,
          rps: median(results[name].map((r) => r.rps)),
          perCall: median(results[name].map((r) => r.perCall)),
          errors: results[name].reduce((n, r) => n + r.errors, 0),
        });
      }
    }
    console.log('\ncall         platform    req/s  CPU ms/call  (medians)');
    for (const row of table) {
      console.log(
        `${row.call.padEnd(12)} ${row.platform.padEnd(9)} ${row.rps.toFixed(0).padStart(7)}  ${row.perCall.toFixed(3).padStart(11)}`,
      );
    }
    for (const call of CALLS) {
      const [e, f] = PLATFORMS.map((p) => table.find((r) => r.call === call.tool && r.platform === p));
      console.log(
        `${call.tool}: Fastify/Express req/s ${(f.rps / e.rps).toFixed(2)}x, CPU per call ${(f.perCall / e.perCall).toFixed(2)}x`,
      );
    }
    console.log(JSON.stringify({ smoke: SMOKE, results: table }));
    for (const row of table) {
      check(row.errors === 0, `${row.call} on ${row.platform}: ${row.errors} failed or wrong responses`);
      check(row.perCall > 0, `${row.call} on ${row.platform}: no CPU per call measured`);
    }
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
