import type { Command } from 'commander';
import type { CliCommand } from '../cli-command';
import { openCliSession } from '../cli-session';
import { CLI_ENV, CliUsageError } from '../cli-settings';
import { loadModels } from '../load-models';

/** The flags of `parse-agent serve`. */
interface ServeFlags {
  host?: string;
  port?: string;
  maxConcurrentStreams?: string;
}

/** `parse-agent serve`: the standalone MCP server over HTTP, until SIGINT or SIGTERM. */
export const serveCommand: CliCommand = (program, cli) => {
  const { env } = cli;
  program
    .command('serve')
    .description('the standalone MCP server over HTTP (/mcp, /health, /tools)')
    .option('--host <host>', `interface to bind (${CLI_ENV.host}, default 127.0.0.1)`)
    .option('--port <port>', `port (${CLI_ENV.port}, default 3001; 0 picks one)`)
    .option(
      '--max-concurrent-streams <n>',
      'streaming tool calls in flight at once; more answer 503 (default 1000)',
    )
    .addHelpText(
      'after',
      `
Binding beyond loopback needs ${CLI_ENV.apiKey}; clients then send it in X-MCP-API-Key.
Logs are readable lines on a terminal and JSON lines otherwise; ${CLI_ENV.logFormat}=json|pretty chooses.

Examples:
  $ parse-agent serve
  $ MCP_API_KEY=$(openssl rand -hex 24) parse-agent serve --host 0.0.0.0 --port 3001`,
    )
    .action(async (options: ServeFlags, command: Command) => {
      if (!cli.deps.startServer) {
        throw new CliUsageError('This build of the CLI cannot start the HTTP server.');
      }
      const settings = await cli.settingsOf(command);
      const host = options.host ?? env[CLI_ENV.host] ?? '127.0.0.1';
      const rawPort = options.port ?? env[CLI_ENV.port] ?? '3001';
      const port = Number(rawPort);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new CliUsageError(`--port must be an integer from 0 to 65535, got "${rawPort}".`);
      }
      // Readable lines for a person at a terminal, JSON lines for a log collector.
      const logFormat = env[CLI_ENV.logFormat] || (cli.stdout.isTTY ? 'pretty' : 'json');
      if (logFormat !== 'json' && logFormat !== 'pretty') {
        throw new CliUsageError(
          `${CLI_ENV.logFormat} must be "json" or "pretty", got "${logFormat}".`,
        );
      }
      const rawStreams = options.maxConcurrentStreams;
      const streams = rawStreams === undefined ? undefined : Number(rawStreams);
      if (streams !== undefined && !(Number.isInteger(streams) && streams >= 1)) {
        throw new CliUsageError(
          `--max-concurrent-streams must be a positive integer, got "${rawStreams}".`,
        );
      }
      // Resolve the identity once (a username logs in here) and hand the server its session.
      const session = await openCliSession(settings, cli.log);
      await session.close();
      const server = await cli.deps.startServer({
        parse: settings.parse,
        host,
        port,
        permissions: settings.permissions,
        sessionToken: session.agent.sessionToken,
        tenantId: settings.tenantId,
        models: settings.models ? loadModels(settings.models) : [],
        unregisteredClasses: settings.unregisteredClasses,
        database: settings.database,
        maxConcurrentStreams: streams,
        logFormat,
      });
      cli.log(`MCP server listening on ${server.url}/mcp as ${session.principal.label}`);
      await new Promise<void>((resolve) => {
        const stop = () => void server.close().then(resolve, resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
};
