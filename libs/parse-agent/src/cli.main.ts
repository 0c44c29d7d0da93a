#!/usr/bin/env node
import 'reflect-metadata';
import { runCli, type CliServeRequest, type CliServer } from './cli/parse-agent-cli';

/**
 * The `parse-agent` executable, an entry point beside index.ts (outside the layers, like it): the
 * commands live in `cli/`, below Nest, and `serve` runs the standalone server, a Nest application,
 * so only an entry point may join the two. The server module is loaded only when `serve` runs, so
 * the other commands (stdio above all) start without Nest.
 */
async function startServer(request: CliServeRequest): Promise<CliServer> {
  const { startStandaloneMcpServer } = await import('./nest/mcp/standalone-server');
  const { ConsoleLogger } = await import('@nestjs/common');
  const json = request.logFormat === 'json';
  const logger = new ConsoleLogger({
    logLevels: ['warn', 'error'],
    ...(json ? { json: true, colors: false } : {}),
  });
  return startStandaloneMcpServer({
    parse: request.parse,
    database: request.database,
    host: request.host,
    port: request.port,
    permissions: request.permissions,
    sessionToken: request.sessionToken,
    models: request.models,
    unregisteredClasses: request.unregisteredClasses,
    defaults: request.tenantId ? { tenantId: request.tenantId } : undefined,
    mcp: { maxConcurrentStreams: request.maxConcurrentStreams },
    logger,
  });
}

// A closed pipe (`parse-agent tools | head`) ends the command quietly, as with other CLIs.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// Exit once the command is done: an SDK's keep-alive sockets must not hold the process open.
const exit = (code: number) => process.stdout.write('', () => process.exit(code));
runCli(process.argv.slice(2), { startServer }).then(exit, (error: unknown) => {
  process.stderr.write(`parse-agent: ${String(error)}\n`);
  exit(1);
});
