import 'reflect-metadata';
import { ConsoleLogger, Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Response } from 'express';
import { join } from 'node:path';
import type { ParseConnectionConfig } from 'nestjs-parse-agent';
import { requestContextMiddleware } from './audit/request-context';
import { lockDataDir, stopStalePostgres, type DataDirLock } from './config/data-dir-lock';
import {
  DemoConfigError,
  loadDemoSettings,
  loadOrCreateOperatorKey,
  type DemoSettings,
} from './config/demo-config';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded/embedded-postgres';
import {
  loadParseServer,
  startParseServer,
  type ParseServerHost,
} from './embedded/parse-server-host';

/**
 * Nest, the library, the demo's module and Parse Server: most of the process's start-up CPU. Loaded
 * once embedded PostgreSQL is on its way (initdb or its start runs in child processes meanwhile),
 * not before it as static imports would be.
 */
async function loadApplication() {
  const [core, platform, agent, appModule, health, cloud, admin, seeder, rowWriter] =
    await Promise.all([
      import('@nestjs/core'),
      import('@nestjs/platform-express'),
      import('nestjs-parse-agent'),
      import('./app.module'),
      import('./health/readiness.service'),
      import('./demo/cloud/tenant-guard'),
      import('./demo/seed/parse-admin-client'),
      import('./demo/seed/demo-seeder'),
      import('./demo/seed/postgres-row-writer'),
    ]);
  loadParseServer();
  return {
    NestFactory: core.NestFactory,
    ExpressAdapter: platform.ExpressAdapter,
    ParseAgentStartupCheck: agent.ParseAgentStartupCheck,
    AppModule: appModule.AppModule,
    checkParse: health.checkParse,
    DEMO_PARSE_CONNECTION: health.DEMO_PARSE_CONNECTION,
    ReadinessService: health.ReadinessService,
    registerTenantGuard: cloud.registerTenantGuard,
    ParseAdminClient: admin.ParseAdminClient,
    seedDemoData: seeder.seedDemoData,
    PostgresRowWriter: rowWriter.PostgresRowWriter,
  };
}
type Application = Awaited<ReturnType<typeof loadApplication>>;

const logger = new Logger('Demo');
/** Added to the MCP grace period: time for Parse Server and PostgreSQL to stop. */
const SHUTDOWN_MARGIN_MS = 5_000;
/** How long a start-up step interrupted by a signal may take to finish before the process exits. */
const STARTUP_STOP_LIMIT_MS = 30_000;

/** Start-up stopped at a step boundary because a signal asked for it: not a failure. */
class StartupInterrupted extends Error {
  override name = 'StartupInterrupted';
}

function consoleLogger(settings: DemoSettings): ConsoleLogger {
  // JSON lines for log collectors; colours for a person at a terminal.
  return settings.logFormat === 'json'
    ? new ConsoleLogger({ json: true, colors: false, logLevels: ['log', 'warn', 'error'] })
    : new ConsoleLogger({ logLevels: ['log', 'warn', 'error'] });
}

async function main(): Promise<void> {
  // Signals are ours from the first line: during start-up one stops it at the next step boundary
  // (a step half done, such as initdb or the seed, is never torn down under itself); once the demo
  // is up, stop() drains and shuts down.
  let startupSignal: string | undefined;
  let stop: ((signal: string) => Promise<void>) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop) return void stop(signal);
    if (startupSignal) return;
    startupSignal = signal;
    logger.log(`${signal} received during start-up; stopping once the current step is done`);
    setTimeout(() => {
      logger.error(`Start-up did not stop within ${STARTUP_STOP_LIMIT_MS} ms; exiting anyway`);
      process.exit(1);
    }, STARTUP_STOP_LIMIT_MS).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const checkpoint = () => {
    if (startupSignal) throw new StartupInterrupted();
  };

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

  // Once only: stop() and the start-up catch below can both reach it (Parse Server's pool cannot be
  // ended twice).
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
  let app: NestExpressApplication | undefined;
  let application: Application | undefined;

  try {
    if (settings.mode === 'embedded') {
      const clusterDir = join(settings.dataDir, 'postgres');
      const stale = await stopStalePostgres(clusterDir);
      if (stale !== undefined) {
        logger.log(`Stopped PostgreSQL (PID ${stale}) left running by a demo that did not stop`);
      }
      checkpoint();
      logger.log(`Starting embedded PostgreSQL in ${clusterDir}`);
      let spawned!: () => void;
      const firstOutput = new Promise<void>((resolve) => (spawned = resolve));
      const postgresStarting = startEmbeddedPostgres({
        dataDir: clusterDir,
        // Its first output line means initdb (or postgres) is running in its own process.
        log: () => spawned(),
        // main.ts stops it after the HTTP drain (see stop below).
        handleSignals: false,
      });
      const settled = postgresStarting.then(
        () => undefined,
        () => undefined,
      );
      await Promise.race([firstOutput, settled]);
      // Loading the application overlaps initdb and the cluster's start. PostgreSQL is awaited
      // even when loading fails, so the catch below stops it.
      let loadError: unknown;
      application = await loadApplication().catch((error: unknown) => {
        loadError = error;
        return undefined;
      });
      postgres = await postgresStarting;
      if (!application) throw loadError;
      checkpoint();
      parseServerURL = `http://${publicHost}:${settings.port}/parse`;
      parse = await startParseServer({
        databaseURI: postgres.uri,
        appId: settings.appId,
        masterKey: settings.masterKey,
        // No client key: like most Parse apps, clients identify with the application id alone.
        serverURL: parseServerURL,
        // Tenancy enforced by Parse itself, for clients that may write through /parse.
        cloud: application.registerTenantGuard,
      });
      checkpoint();
      // Mounted before Nest registers its body parsers: Parse Server parses its own requests.
      server.use('/parse', parse.app);
      // Parse Server has answered 500 already and passes the error on only to have it logged: one
      // plain line, and none while stopping (its pool is closed under requests still running).
      server.use('/parse', (error: unknown, _req: unknown, res: Response, _next: NextFunction) => {
        if (!res.headersSent) res.status(500).json({ code: 1, error: 'Internal server error.' });
        if (!stopping && !startupSignal) logger.error(`Parse Server: ${describeError(error)}`);
      });
    } else {
      application = await loadApplication();
      const { checkParse } = application;
      parseServerURL = settings.serverURL;
      // A wrong URL or master key is one clear error now, not a failure on every call later.
      const problems = await checkParse({
        serverURL: settings.serverURL,
        appId: settings.appId,
        masterKey: settings.masterKey,
        javascriptKey: settings.javascriptKey,
      });
      if (problems.length) throw new DemoConfigError(problems.join('; '));
    }

    const {
      AppModule,
      NestFactory,
      ExpressAdapter,
      ReadinessService,
      ParseAdminClient,
      seedDemoData,
      PostgresRowWriter,
      ParseAgentStartupCheck,
      checkParse,
      DEMO_PARSE_CONNECTION,
    } = application;
    checkpoint();
    const mcpApiKey = settings.mcpApiKey ?? (await loadOrCreateOperatorKey(settings.dataDir));
    app = await NestFactory.create<NestExpressApplication>(
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
    const nest = app;
    const readiness = app.get(ReadinessService);

    const shutdown = async (signal: string) => {
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
      await nest.close().catch((e: unknown) => logger.error(`HTTP stop: ${String(e)}`));
      await cleanup();
      logger.log('Stopped');
      process.exit(0);
    };

    checkpoint();
    await app.listen(settings.port, settings.host);
    checkpoint();
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : settings.port;
    const base = `http://${publicHost}:${port}`;

    if (settings.mode === 'embedded' && postgres) {
      const admin = new ParseAdminClient(parseServerURL, settings.appId, settings.masterKey);
      // Rows straight into Parse's own database: one INSERT per class, not a Parse write per row.
      const rows = new PostgresRowWriter(postgres.uri);
      const report = await seedDemoData(admin, settings.demoPassword, { rows }).finally(() =>
        rows.close(),
      );
      checkpoint();
      logger.log(
        `${report.seeded ? 'Seeded' : 'Kept'} demo data: ${Object.entries(report.counts)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
      // Ready means a user can log in: prove it with one demo login.
      await admin.request('POST', '/login', { username: 'alice', password: settings.demoPassword });
    }
    checkpoint();
    // The library's own start-up check (master key, direct PostgreSQL path) has seen Parse answer.
    await app.get(ParseAgentStartupCheck).ready();
    const problems = await checkParse(app.get<ParseConnectionConfig>(DEMO_PARSE_CONNECTION));
    if (problems.length) throw new DemoConfigError(problems.join('; '));
    checkpoint();
    readiness.markSeeded();

    const lines = [
      '',
      `  nestjs-parse-agent demo is up (${settings.mode === 'embedded' ? 'embedded PostgreSQL + Parse Server' : 'existing Parse Server'})`,
      `  Health:      ${base}/health/ready   (liveness: ${base}/health/live)`,
      `  Parse URL:   ${parseServerURL}   app id: ${settings.appId}`,
      `  MCP URL:     ${base}/mcp   (Streamable HTTP; see docs/mcp-endpoint.md)`,
      `  Analytics:   ${postgres || (settings.mode === 'external' && settings.postgresURI) ? 'direct PostgreSQL path (row ACL, CLP and protectedFields enforced in SQL)' : 'Parse REST only (set POSTGRES_URI for the direct PostgreSQL path)'}`,
      `  Console:     ${base}/console/   (sign in as a demo user or with the operator key; see docs/console.md)`,
      `  MCP auth:    Authorization: Bearer <Parse session token>   or   X-MCP-API-Key: ${mcpApiKey}${settings.mcpApiKey ? ' (from MCP_API_KEY)' : ` (kept in ${join(settings.dataDir, 'mcp-api-key')}; set MCP_API_KEY to choose one)`}`,
      `  Rate limit:  ${settings.rateLimitPerMinute} tool calls per minute per caller (MCP_RATE_LIMIT)`,
    ];
    if (settings.mode === 'embedded' && postgres) {
      lines.push(
        `  PostgreSQL:  ${postgres.uri}`,
        `               (the demo's local dev database, credentials included: another app's direct path can use it)`,
        `  Data dir:    ${settings.dataDir}`,
        `  Demo users:  alice (tenant acme), bob (tenant globex), carol (admin); password "${settings.demoPassword}"`,
        `  Log in:      curl -s -X POST ${parseServerURL}/login -H 'X-Parse-Application-Id: ${settings.appId}' \\`,
        `                 -H 'Content-Type: application/json' -d '{"username":"alice","password":"${settings.demoPassword}"}'`,
      );
    }
    lines.push('');
    process.stdout.write(lines.join('\n') + '\n');
    stop = shutdown;
    if (startupSignal) await shutdown(startupSignal);
  } catch (error) {
    if (!startupSignal) {
      await app?.close().catch(() => undefined);
      await cleanup();
      throw error;
    }
    // Stopped by a signal during start-up: not a failure, whatever the interrupted step said.
    if (!(error instanceof StartupInterrupted)) {
      logger.log(`The interrupted start-up step ended with: ${describeError(error)}`);
    }
    readinessStopping(app, application);
    await app?.close().catch((e: unknown) => logger.error(`HTTP stop: ${String(e)}`));
    await cleanup();
    logger.log('Stopped');
    process.exit(0);
  }
}

function readinessStopping(
  app: NestExpressApplication | undefined,
  application: Application | undefined,
): void {
  try {
    if (app && application) app.get(application.ReadinessService).markShuttingDown();
  } catch {
    // not created yet
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
