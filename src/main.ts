import 'reflect-metadata';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import { join } from 'node:path';
import { ParseRestClient } from 'nestjs-parse-agent';
import { AppModule } from './app.module';
import { requestContextMiddleware } from './audit/request-context';
import { assertPostgresNotRunning, lockDataDir, type DataDirLock } from './config/data-dir-lock';
import {
  DemoConfigError,
  loadDemoSettings,
  loadOrCreateOperatorKey,
  type DemoSettings,
} from './config/demo-config';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded/embedded-postgres';
import { startParseServer, type ParseServerHost } from './embedded/parse-server-host';
import { checkParse, DEMO_PARSE_CLIENT, ReadinessService } from './health/readiness.service';
import { ParseAdminClient } from './demo/seed/parse-admin-client';
import { seedDemoData } from './demo/seed/demo-seeder';

const logger = new Logger('Demo');
/** Added to the MCP grace period: time for Parse Server and PostgreSQL to stop. */
const SHUTDOWN_MARGIN_MS = 5_000;

function consoleLogger(settings: DemoSettings): ConsoleLogger {
  // JSON lines for log collectors; colours for a person at a terminal.
  return settings.logFormat === 'json'
    ? new ConsoleLogger({ json: true, colors: false, logLevels: ['log', 'warn', 'error'] })
    : new ConsoleLogger({ logLevels: ['log', 'warn', 'error'] });
}

async function main(): Promise<void> {
  const settings = await loadDemoSettings();
  Logger.overrideLogger(consoleLogger(settings));
  const lock: DataDirLock = await lockDataDir(settings.dataDir);
  const server = express();
  server.use(requestContextMiddleware);
  let postgres: RunningPostgres | undefined;
  let parse: ParseServerHost | undefined;
  const publicHost =
    settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;
  let parseServerURL: string;

  // Once only: a signal during start-up runs it from stop(), and the start-up work that then fails
  // would run it again from the catch below (Parse Server's pool cannot be ended twice).
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await parse
        ?.shutdown()
        .catch((e: unknown) => logger.error(`Parse Server stop: ${String(e)}`));
      await postgres?.stop().catch((e: unknown) => logger.error(`PostgreSQL stop: ${String(e)}`));
      await lock.release();
    })());
  let stopping = false;

  try {
    if (settings.mode === 'embedded') {
      const clusterDir = join(settings.dataDir, 'postgres');
      await assertPostgresNotRunning(clusterDir);
      postgres = await startEmbeddedPostgres({
        dataDir: clusterDir,
        log: () => undefined,
        // main.ts stops it after the HTTP drain (see stop below).
        handleSignals: false,
      });
      parseServerURL = `http://${publicHost}:${settings.port}/parse`;
      parse = await startParseServer({
        databaseURI: postgres.uri,
        appId: settings.appId,
        masterKey: settings.masterKey,
        // No client key: like most Parse apps, clients identify with the application id alone.
        serverURL: parseServerURL,
      });
      // Mounted before Nest registers its body parsers: Parse Server parses its own requests.
      server.use('/parse', parse.app);
    } else {
      parseServerURL = settings.serverURL;
      // A wrong URL or master key is one clear error now, not a failure on every call later.
      const problems = await checkParse(
        new ParseRestClient({
          serverURL: settings.serverURL,
          appId: settings.appId,
          masterKey: settings.masterKey,
          javascriptKey: settings.javascriptKey,
        }),
      );
      if (problems.length) throw new DemoConfigError(problems.join('; '));
    }

    const mcpApiKey = settings.mcpApiKey ?? (await loadOrCreateOperatorKey(settings.dataDir));
    const app = await NestFactory.create<NestExpressApplication>(
      AppModule.forRoot({
        settings,
        parseServerURL,
        mcpApiKey,
        postgresURI:
          postgres?.uri ?? (settings.mode === 'external' ? settings.postgresURI : undefined),
      }),
      new ExpressAdapter(server),
      // Keep-alive sockets must not hold the process after the drain answered every call.
      { logger: consoleLogger(settings), forceCloseConnections: true },
    );
    const readiness = app.get(ReadinessService);

    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      const deadline = settings.shutdownGraceMs + SHUTDOWN_MARGIN_MS;
      setTimeout(() => {
        logger.error(`Shutdown took longer than ${deadline} ms; exiting anyway`);
        process.exit(1);
      }, deadline).unref();
      logger.log(`${signal} received, shutting down (grace period ${settings.shutdownGraceMs} ms)`);
      readiness.markShuttingDown();
      // Drains the MCP endpoint (refuse new calls, finish or cancel those in flight), then closes
      // the HTTP server; Parse Server and PostgreSQL stop after it.
      await app.close().catch((e: unknown) => logger.error(`HTTP stop: ${String(e)}`));
      await cleanup();
      logger.log('Stopped');
      process.exit(0);
    };
    process.once('SIGINT', () => void stop('SIGINT'));
    process.once('SIGTERM', () => void stop('SIGTERM'));

    await app.listen(settings.port, settings.host);
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : settings.port;
    const base = `http://${publicHost}:${port}`;

    if (settings.mode === 'embedded') {
      const admin = new ParseAdminClient(parseServerURL, settings.appId, settings.masterKey);
      const report = await seedDemoData(admin, settings.demoPassword);
      logger.log(
        `${report.seeded ? 'Seeded' : 'Kept'} demo data: ${Object.entries(report.counts)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
      // Ready means a user can log in: prove it with one demo login.
      await admin.request('POST', '/login', { username: 'alice', password: settings.demoPassword });
    }
    const problems = await checkParse(app.get<ParseRestClient>(DEMO_PARSE_CLIENT));
    if (problems.length) throw new DemoConfigError(problems.join('; '));
    readiness.markSeeded();

    const lines = [
      '',
      `  nestjs-parse-agent demo is up (${settings.mode === 'embedded' ? 'embedded PostgreSQL + Parse Server' : 'existing Parse Server'})`,
      `  Health:      ${base}/health/ready   (liveness: ${base}/health/live)`,
      `  Parse URL:   ${parseServerURL}   app id: ${settings.appId}`,
      `  MCP URL:     ${base}/mcp   (Streamable HTTP; see docs/mcp-endpoint.md)`,
      `  Analytics:   ${postgres || (settings.mode === 'external' && settings.postgresURI) ? 'direct PostgreSQL path (row ACL, CLP and protectedFields enforced in SQL)' : 'Parse REST only (set POSTGRES_URI for the direct PostgreSQL path)'}`,
      `  MCP auth:    Authorization: Bearer <Parse session token>   or   X-MCP-API-Key: ${mcpApiKey}${settings.mcpApiKey ? ' (from MCP_API_KEY)' : ` (kept in ${join(settings.dataDir, 'mcp-api-key')}; set MCP_API_KEY to choose one)`}`,
      `  Rate limit:  ${settings.rateLimitPerMinute} tool calls per minute per caller (MCP_RATE_LIMIT)`,
    ];
    if (settings.mode === 'embedded') {
      lines.push(
        `  Data dir:    ${settings.dataDir}`,
        `  Demo users:  alice (tenant acme), bob (tenant globex), carol (admin); password "${settings.demoPassword}"`,
        `  Log in:      curl -s -X POST ${parseServerURL}/login -H 'X-Parse-Application-Id: ${settings.appId}' \\`,
        `                 -H 'Content-Type: application/json' -d '{"username":"alice","password":"${settings.demoPassword}"}'`,
      );
    }
    lines.push('');
    process.stdout.write(lines.join('\n') + '\n');
  } catch (error) {
    await cleanup();
    // Stopped by a signal during start-up: stop() reports and exits; this is not a failure.
    if (stopping) return;
    throw error;
  }
}

main().catch((error: unknown) => {
  if (error instanceof DemoConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${describeError(error)}\n`);
  }
  process.exit(1);
});

/** Some dependencies reject with non-Error values (or nothing): never print "undefined". */
function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (error === undefined || error === null) return 'an unknown error (no details were given)';
  return typeof error === 'string' ? error : JSON.stringify(error);
}
