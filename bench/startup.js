#!/usr/bin/env node
'use strict';
// `npm run bench:startup`: how long `npm start` takes to bring the demo up, measured from the spawn
// of `npm start` to the demo's "demo is up" banner (the start build, then embedded PostgreSQL,
// Parse Server, the seed, the demo login and the library's start-up check):
//   1. the start build alone (scripts/start-build.js): every file transpiled, as on a fresh
//      clone, then again with nothing changed, as on every restart
//   2. `npm start` on a fresh DATA_DIR with every file transpiled again (START_BUILD_FORCE=1):
//      what a fresh clone sees after `npm ci` (initdb, schema creation and the full seed)
//   3. `npm start` restarts on the kept data with nothing to build (BENCH_STARTUP_RESTARTS,
//      default 3)
// BENCH_STARTUP_TSC=1 also times `npm run build` (both tsc projects, type-checked: what the
// package build, lint:api and the other benches run), which `npm start` no longer does.
// Each start is stopped with SIGINT after its banner and must exit 0 before the next one begins.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SMOKE, setting, check } = require('./lib/smoke');

const ROOT = path.join(__dirname, '..');
const RESTARTS = setting('BENCH_STARTUP_RESTARTS', 3, 1);
const LIMIT_MS = 180_000;

function timed(command, args, env = {}) {
  const started = process.hrtime.bigint();
  const run = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  check(run.status === 0, `${command} ${args.join(' ')} exited with ${run.status}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Runs `npm start`, resolves with the ms to the banner, stops it and checks it exited cleanly. */
function startOnce(dataDir, port, extraEnv = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const env = {
      ...process.env,
      ...extraEnv,
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_FORMAT: 'json',
    };
    // The embedded demo, whatever the caller's shell says about an external Parse Server.
    for (const name of [
      'PARSE_SERVER_URL',
      'PARSE_APP_ID',
      'PARSE_MASTER_KEY',
      'POSTGRES_URI',
      'MONGODB_URI',
    ])
      delete env[name];
    // Its own process group, so a timeout can end npm, the start script's shell and the demo.
    const child = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const signal = (name, pid = -child.pid) => {
      try {
        process.kill(pid, name);
      } catch {
        // already gone
      }
    };
    let output = '';
    let upMs;
    const timer = setTimeout(() => {
      signal('SIGKILL');
      reject(new Error(`no "demo is up" within ${LIMIT_MS} ms:\n${output.slice(-3000)}`));
    }, LIMIT_MS);
    const onData = (chunk) => {
      output += chunk;
      if (upMs === undefined && output.includes('demo is up')) {
        upMs = Number(process.hrtime.bigint() - started) / 1e6;
        // SIGINT to the demo itself, read from its JSON log lines: npm does not pass a signal on
        // through the start script's shell, and the whole group would stop embedded PostgreSQL
        // under the demo's own drain.
        const pid = Number(/"pid":(\d+)/.exec(output)?.[1]);
        check(pid > 0, 'no pid in the demo log lines');
        signal('SIGINT', pid);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code, exitSignal) => {
      clearTimeout(timer);
      if (upMs === undefined)
        reject(
          new Error(
            `the demo exited (${code ?? exitSignal}) before it was up:\n${output.slice(-3000)}`,
          ),
        );
      // npm exits with the demo's exit code.
      else if (code !== 0)
        reject(
          new Error(
            `the demo exited with ${code ?? exitSignal} after SIGINT:\n${firstError(output)}`,
          ),
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
  const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const tscMs =
    !SMOKE && process.env.BENCH_STARTUP_TSC === '1' ? timed('npm', ['run', 'build']) : undefined;
  if (tscMs !== undefined) console.log(`npm run build (both tsc projects): ${seconds(tscMs)}`);
  const startBuild = path.join(ROOT, 'scripts', 'start-build.js');
  const buildColdMs = timed(process.execPath, [startBuild, '--force']);
  const buildNoopMs = timed(process.execPath, [startBuild]);
  console.log(
    `start build (scripts/start-build.js): every file ${seconds(buildColdMs)}, nothing changed ${(buildNoopMs / 1000).toFixed(2)} s`,
  );
  // Required after the build: it is the build's output.
  const { findFreePort } = require('../dist/src/embedded/free-port');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parse-agent-bench-startup-'));
  fs.chmodSync(dataDir, 0o755); // embedded PostgreSQL runs as another user when we are root
  try {
    // (A smoke run does not transpile everything a second time.)
    const first = await startOnce(
      dataDir,
      await findFreePort(),
      SMOKE ? {} : { START_BUILD_FORCE: '1' },
    );
    check(first.seeded, 'the first start on a fresh DATA_DIR did not seed the demo data');
    console.log(
      `npm start, fresh DATA_DIR${SMOKE ? '' : ', every file built'}: ${seconds(first.upMs)} to "demo is up"`,
    );
    const restarts = [];
    for (let i = 0; i < RESTARTS; i++) {
      const next = await startOnce(dataDir, await findFreePort());
      check(next.kept, 'a restart on kept data seeded again instead of keeping the data');
      restarts.push(next.upMs);
      console.log(`npm start ${i + 1}, kept data, nothing to build: ${seconds(next.upMs)}`);
    }
    const sorted = [...restarts].sort((a, b) => a - b);
    const out = {
      smoke: SMOKE,
      tscBuildMs: tscMs === undefined ? null : Math.round(tscMs),
      startBuildMs: Math.round(buildColdMs),
      startBuildNoopMs: Math.round(buildNoopMs),
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
