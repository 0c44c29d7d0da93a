#!/usr/bin/env node
'use strict';
// `npm run bench:profile`: where the MCP app's CPU goes for one call. Starts the stack, runs the
// bench server under `--cpu-prof`, loads it with one call (default `query_class`, 100 orders;
// `BENCH_TOOL` and `BENCH_ARGS` choose another) at BENCH_CONNECTIONS (16) for BENCH_SECONDS (10)
// after a warm-up, stops it and prints self time grouped by function and by package or library
// folder, garbage collection included, as shares of the profile's busy time. The .cpuprofile is
// kept (its path is printed) for Chrome DevTools. BENCH_PROFILE_PROXY=1 profiles
// bench/minimal-proxy.js (the reference) for the same call instead.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runLoad, cpuMs } = require('./lib/load');
const { withParseStack } = require('./lib/processes');
const { SMOKE, setting, check } = require('./lib/smoke');

const SECONDS = setting('BENCH_SECONDS', 10, 0.5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const TOOL = process.env.BENCH_TOOL ?? 'query_class';
const ARGS = JSON.parse(process.env.BENCH_ARGS ?? '{"class_name":"Order","limit":100}');
const TOP = Number(process.env.BENCH_TOP ?? 40);
const PROXY = process.env.BENCH_PROFILE_PROXY === '1';
// The fields the proxy asks Parse for: the ones the tool asks for on the demo's orders.
const KEYS =
  'objectId,createdAt,updatedAt,tenantId,orderNumber,customer,product,quantity,unitPrice,total,status,channel,placedAt';

/** The folder a profile node's code belongs to: a package, the library's folder, or node. */
function place(url) {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg && pkg[1] !== 'nestjs-parse-agent') return pkg[1];
  const lib = url.match(/parse-agent\/(?:dist\/)?(?:src\/)?([^/]+)\//);
  return lib ? `lib/${lib[1]}` : path.basename(url);
}

function summarize(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0));
  }
  let total = 0;
  let idle = 0;
  const byFunction = new Map();
  const byPlace = new Map();
  for (const [id, us] of self) {
    const node = byId.get(id);
    const { functionName, url, lineNumber } = node.callFrame;
    total += us;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    const fn = `${functionName || '(anonymous)'} ${url ? path.basename(url) : ''}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const where = functionName.startsWith('(') ? functionName : place(url);
    byPlace.set(where, (byPlace.get(where) ?? 0) + us);
  }
  return { busy: total - idle, byFunction, byPlace };
}

function print(title, map, busy, top) {
  console.log(`\n${title} (share of busy time)`);
  const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows) {
    console.log(`  ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`);
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parse-agent-profile-'));
  let perCall = 0;
  await withParseStack('profile', async ({ env, start }) => {
    const profiling = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
    // The bench server seeds the orders either way; with BENCH_PROFILE_PROXY=1 the minimal proxy
    // is the process profiled, for the same call, as the reference.
    const app = await start('server.js', env, PROXY ? [] : profiling);
    const server = PROXY
      ? await start('minimal-proxy.js', { ...env, BENCH_KEYS: KEYS }, profiling)
      : app;
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: TOOL, arguments: ARGS },
    });
    const side = {
      url: `http://127.0.0.1:${server.info.port}/${PROXY ? '' : 'mcp'}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: call,
      check: (b) => b.includes('"isError":false'),
    };
    if (PROXY && TOOL !== 'query_class' && TOOL !== 'bench_echo') {
      throw new Error('The minimal proxy answers query_class and bench_echo only.');
    }
    await runLoad({ ...side, connections: CONNECTIONS, durationMs: SMOKE ? 200 : 3000 });
    const before = cpuMs(server.child.pid);
    const run = await runLoad({ ...side, connections: CONNECTIONS, durationMs: SECONDS * 1000 });
    perCall = (cpuMs(server.child.pid) - before) / Math.max(1, run.requests);
    check(run.requests > 0 && run.errors === 0, `${TOOL} answered without errors`);
    console.log(
      `${PROXY ? 'minimal proxy, ' : ''}${TOOL} at ${CONNECTIONS} connections: ${run.rps.toFixed(0)} req/s, ` +
        `app CPU ${perCall.toFixed(3)} ms per call, ${run.errors} errors`,
    );
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGINT');
    await exited;
  });
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  check(Boolean(file), 'the server wrote a CPU profile');
  if (!file) return;
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const { busy, byFunction, byPlace } = summarize(profile);
  print('By package or library folder', byPlace, busy, TOP);
  print('By function', byFunction, busy, TOP);
  console.log(`\nProfile: ${path.join(dir, file)}`);
  const share = (map) =>
    Object.fromEntries(
      [...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP)
        .map(([name, us]) => [name, Number(((100 * us) / busy).toFixed(2))]),
    );
  console.log(
    JSON.stringify({
      tool: TOOL,
      cpuPerCallMs: perCall,
      busyMs: busy / 1000,
      places: share(byPlace),
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
