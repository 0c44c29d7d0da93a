/* eslint-disable @typescript-eslint/no-require-imports */
/* global require, process */
// A PostgreSQL with pgvector for the pgvector suite: PGlite (PostgreSQL in WebAssembly) with the
// pgvector extension, served over the wire protocol by pglite-socket. Run as a child process
// (PGlite loads its WebAssembly with dynamic imports, which jest's module sandbox refuses).
// Prints "listening <host:port>" once it accepts connections; stops on SIGTERM.
const { PGlite } = require('@electric-sql/pglite');
const { vector } = require('@electric-sql/pglite-pgvector');
const { PGLiteSocketServer } = require('@electric-sql/pglite-socket');

(async () => {
  const db = await PGlite.create({ extensions: { vector } });
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1' });
  await server.start();
  process.stdout.write(`listening ${server.getServerConn()}\n`);
  process.on('SIGTERM', async () => {
    await server.stop();
    await db.close();
    process.exit(0);
  });
})().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
