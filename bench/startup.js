#!/usr/bin/env node
'use strict';
// `npm run bench:startup`: how long the demo takes to come up, measured from the spawn of
// `node dist/src/main.js` to its "demo is up" banner (embedded PostgreSQL, Parse Server, the seed,
// the demo login and the library's start-up check all happen before it):
//   1. first start on a fresh DATA_DIR (initdb, schema creation and the full seed)
//   2. restarts on the kept data (BENCH_STARTUP_RESTARTS, default 3; the cluster and data kept)
// Full runs also time the build itself (`npm run build`, both tsc projects) first, which
// `npm start` runs every time; BENCH_STARTUP_SKIP_BUILD=1 leaves it out. Each start is stopped
// with SIGINT after its banner and must exit 0 before the next one begins.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SMOKE, setting, check } = require('./lib/smoke');

const ROOT = path.join(__dirname, '..');
const RESTARTS = setting('BENCH_STARTUP_RESTARTS', 3, 1);
const LIMIT_MS = 180_000;

function timeBuild() {
  const started = process.hrtime.bigint();
  const run = spawnSync('npm', ['run', 'build'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  check(run.status === 0, `npm run build exited with ${run.status}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Starts the demo, resolves with the ms to its banner, stops it and checks it exited cleanly. */
function startOnce(dataDir, port) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_FORMAT: 'json' };
    // The embedded demo, whatever the caller's shell says about an external Parse Server.
    for (const name of [
      'PARSE_SERVER_URL',
      'PARSE_APP_ID',
      'PARSE_MASTER_KEY',
      'POSTGRES_URI',
      'MONGODB_URI',
    ])
      delete env[name];
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'src', 'main.js')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let upMs;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no "demo is up" within ${LIMIT_MS} ms:\n${output.slice(-3000)}`));
    }, LIMIT_MS);
    const onData = (chunk) => {
      output += chunk;
      if (upMs === undefined && output.includes('demo is up')) {
        upMs = Number(process.hrtime.bigint() - started) / 1e6;
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (upMs === undefined)
        reject(
          new Error(
            `the demo exited (${code ?? signal}) before it was up:\n${output.slice(-3000)}`,
          ),
        );
      else if (code !== 0)
        reject(
          new Error(`the demo exited with ${code ?? signal} after SIGINT:\n${firstError(output)}`),
        );
      else
        resolve({
          upMs,
          seeded: /Seeded demo data/.test(output),
          kept: /Kept demo data/.test(output),
        });
    });
  });
}

/** The first error line and what follows it (a dumped object can bury its head otherwise). */
function firstError(output) {
  const at = output.search(/uncaught|Error|error:/);
  const from = at < 0 ? Math.max(0, output.length - 3000) : Math.max(0, at - 200);
  return output.slice(from, from + 3000);
}

async function main() {
  console.log(
    `Machine: ${os.cpus().length} x ${os.cpus()[0].model.trim()}, Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}` +
      (SMOKE ? ' (SMOKE RUN: the figures mean nothing)' : ''),
  );
  const buildMs = SMOKE || process.env.BENCH_STARTUP_SKIP_BUILD === '1' ? undefined : timeBuild();
  if (buildMs !== undefined)
    console.log(`npm run build (both tsc projects): ${(buildMs / 1000).toFixed(1)} s`);
  // Required after the build: it is the build's output.
  const { findFreePort } = require('../dist/src/embedded/free-port');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parse-agent-bench-startup-'));
  fs.chmodSync(dataDir, 0o755); // embedded PostgreSQL runs as another user when we are root
  try {
    const first = await startOnce(dataDir, await findFreePort());
    check(first.seeded, 'the first start on a fresh DATA_DIR did not seed the demo data');
    console.log(`first start, fresh DATA_DIR: ${(first.upMs / 1000).toFixed(1)} s to "demo is up"`);
    const restarts = [];
    for (let i = 0; i < RESTARTS; i++) {
      const next = await startOnce(dataDir, await findFreePort());
      check(next.kept, 'a restart on kept data seeded again instead of keeping the data');
      restarts.push(next.upMs);
      console.log(`restart ${i + 1}, kept data:   ${(next.upMs / 1000).toFixed(1)} s`);
    }
    const sorted = [...restarts].sort((a, b) => a - b);
    const out = {
      smoke: SMOKE,
      buildMs: buildMs === undefined ? null : Math.round(buildMs),
      firstStartMs: Math.round(first.upMs),
      restartMs: restarts.map(Math.round),
      restartMedianMs: Math.round(sorted[Math.floor(sorted.length / 2)]),
    };
    console.log(JSON.stringify(out));
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  },
);
