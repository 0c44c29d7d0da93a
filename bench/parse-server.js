'use strict';
// Parse Server 9 in its own process, as in a real deployment: the MCP app reaches it over HTTP.
const express = require('express');
const { startParseServer } = require('../dist/src/embedded/parse-server-host');
const { findFreePort } = require('../dist/src/embedded/free-port');

async function main() {
  process.env.TESTING = '1';
  const port = await findFreePort();
  const serverURL = `http://127.0.0.1:${port}/parse`;
  const appId = 'parse-agent-bench';
  const masterKey = 'bench-master-key';
  const parse = await startParseServer({ databaseURI: process.env.BENCH_DATABASE_URI, appId, masterKey, serverURL });
  const app = express();
  app.use('/parse', parse.app);
  app.get('/bench/rss', (_req, res) => res.json({ rss: process.memoryUsage().rss }));
  const server = await new Promise((r) => {
    const s = app.listen(port, '127.0.0.1', () => r(s));
  });
  // Idle keep-alive sockets are closed by the clients only: a server closing them at its 5 s
  // default races a client reusing one (a reset, counted as an error) when the machine is loaded.
  server.keepAliveTimeout = 0;
  process.stdout.write(JSON.stringify({ ready: true, serverURL, appId, masterKey }) + '\n');
}

process.on('SIGINT', () => process.exit(0));
main().catch((e) => {
  process.stderr.write(`bench parse server failed: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
