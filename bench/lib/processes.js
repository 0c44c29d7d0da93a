'use strict';
// Starts bench processes: one script and its `{"ready":...}` line, or a whole stack.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function startProcess(script, env, nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, path.join(__dirname, '..', script)], {
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

/**
 * Runs `body` on a fresh stack: embedded PostgreSQL in a temporary directory and a Parse Server
 * process on it. `body` gets that Parse process, `env` (what points a bench server at it) and
 * `start`, which starts a script like startProcess and stops it with the stack. However `body`
 * ends, every process started is killed, PostgreSQL stops and the directory is removed.
 */
async function withParseStack(name, body) {
  // Required here: the other helpers work before the project is built.
  const { startEmbeddedPostgres } = require('../../dist/src/embedded/embedded-postgres');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `parse-agent-${name}-`));
  fs.chmodSync(tmp, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), fast: true });
  const children = [];
  const start = async (script, env, nodeArgs) => {
    const started = await startProcess(script, env, nodeArgs);
    children.push(started.child);
    return started;
  };
  try {
    const parse = await start('parse-server.js', { BENCH_DATABASE_URI: pg.uri });
    const env = {
      BENCH_PARSE_URL: parse.info.serverURL,
      BENCH_APP_ID: parse.info.appId,
      BENCH_MASTER_KEY: parse.info.masterKey,
    };
    return await body({ parse, env, start });
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await pg.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

module.exports = { startProcess, withParseStack };
