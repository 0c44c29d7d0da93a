import { ConsoleLogger, Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type Express, type NextFunction, type Response } from 'express';
import { join } from 'node:path';
import { requestContextMiddleware } from '../example/audit/request-context';
import type { ReadinessService } from '../example/health/readiness.service';
import { lockDataDir, stopStalePostgres, type DataDirLock } from './data-dir-lock';
import { demoBanner } from './demo-banner';
import {
  DemoConfigError,
  loadDemoSettings,
  loadOrCreateOperatorKey,
  type DemoSettings,
  type EmbeddedSettings,
  type ExternalSettings,
} from './demo-config';
import { describeError } from './describe-error';
import { assertPortFree } from './port-check';
import { postgresPortFor } from './postgres-port';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres';
import {
  loadParseServer,
  startLiveQueryServer,
  startParseServer,
  type LiveQueryServerHost,
  type ParseServerHost,
} from './parse-server-host';
import { DEMO_SCHEMAS } from './seed/demo-schemas';
import { StartupInterrupted, StartupSignals } from './startup-signals';

/**
 * Nest, the library, the example app and Parse Server: most of the process's start-up CPU. Loaded
 * once embedded PostgreSQL is on its way (initdb or its start runs in child processes meanwhile),
 * not before it as static imports would be. Relative modules only: each imports the library
 * statically, so a build that maps `nestjs-parse-agent` to its sources (`nest build`) rewrites it.
 */
async function loadApplication() {
  const [serve, cloud, seed] = await Promise.all([
    import('../example/serve'),
    import('./cloud/tenant-guard'),
    import('./seed/seed-embedded'),
  ]);
  loadParseServer();
  return {
    createExampleApp: serve.createExampleApp,
    startupProblems: serve.startupProblems,
    checkParse: serve.checkParse,
    ReadinessService: serve.ReadinessService,
    registerTenantGuard: cloud.registerTenantGuard,
    seedEmbeddedDemo: seed.seedEmbeddedDemo,
    indexDemoSearch: seed.indexDemoSearch,
  };
}
type Application = Awaited<ReturnType<typeof loadApplication>>;

/** Added to the MCP grace period: time for Parse Server and PostgreSQL to stop. */
const SHUTDOWN_MARGIN_MS = 5_000;

/**
 * The demo classes Parse LiveQuery publishes. Order only: LiveQuery checks a class's `find`
 * permission without the user's roles, and Order is the demo class whose `find` also admits any
 * signed-in user (its rows' ACLs still keep tenants apart).
 */
const DEMO_LIVE_QUERY_CLASSES = ['Order'];

function consoleLogger(settings: DemoSettings): ConsoleLogger {
  // JSON lines for log collectors; colours for a person at a terminal.
  return settings.logFormat === 'json'
    ? new ConsoleLogger({ json: true, colors: false, logLevels: ['log', 'warn', 'error'] })
    : new ConsoleLogger({ logLevels: ['log', 'warn', 'error'] });
}

/**
 * The process `npm start` runs: the example app in front of the embedded default (PostgreSQL,
 * Parse Server and the seeded demo data in this process) or of an existing Parse Server. It owns
 * the start-up order, readiness and a graceful stop; the example app knows nothing of it.
 */
export class DemoHost {
  protected readonly logger = new Logger('Demo');
  protected readonly signals = new StartupSignals(this.logger);
  protected readonly server: Express = express();
  protected settings!: DemoSettings;
  protected lock!: DataDirLock;
  protected postgres?: RunningPostgres;
  protected parse?: ParseServerHost;
  /** Parse LiveQuery on the app's HTTP server (embedded mode). */
  protected liveQuery?: LiveQueryServerHost;
  protected application?: Application;
  protected app?: NestExpressApplication;
  protected parseServerURL = '';
  protected stopping = false;
  protected cleaning?: Promise<void>;

  async run(): Promise<void> {
    this.settings = await loadDemoSettings();
    Logger.overrideLogger(consoleLogger(this.settings));
    // Before anything starts: a busy port would have this demo's checks talk to another server.
    await assertPortFree(this.settings.port, this.settings.host);
    this.lock = await lockDataDir(this.settings.dataDir);
    this.server.use(requestContextMiddleware);
    try {
      await this.start();
    } catch (error) {
      await this.abort(error);
    }
  }

  /** The host name a user reaches the demo by (a wildcard bind is reached on loopback). */
  protected get publicHost(): string {
    const { host } = this.settings;
    return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  }

  protected async start(): Promise<void> {
    const { settings, signals } = this;
    const application =
      settings.mode === 'embedded'
        ? await this.startEmbedded(settings)
        : await this.connectExternal(settings);
    signals.checkpoint();
    const mcpApiKey = settings.mcpApiKey ?? (await loadOrCreateOperatorKey(settings.dataDir));
    const postgresURI =
      this.postgres?.uri ?? (settings.mode === 'external' ? settings.postgresURI : undefined);
    const runtime = {
      settings,
      parseServerURL: this.parseServerURL,
      mcpApiKey,
      postgresURI,
      // The embedded Parse Server runs LiveQuery on this app's HTTP server (started below).
      ...(settings.mode === 'embedded'
        ? { liveQuery: { classNames: DEMO_LIVE_QUERY_CLASSES } }
        : {}),
    };
    const app = await application.createExampleApp(runtime, this.server, consoleLogger(settings));
    this.app = app;
    const readiness = app.get(application.ReadinessService);

    signals.checkpoint();
    await app.listen(settings.port, settings.host);
    if (settings.mode === 'embedded') {
      this.liveQuery = await startLiveQueryServer(app.getHttpServer(), {
        appId: settings.appId,
        masterKey: settings.masterKey,
        serverURL: this.parseServerURL,
      });
    }
    signals.checkpoint();
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : settings.port;

    if (settings.mode === 'embedded' && this.postgres) {
      const target = {
        parseServerURL: this.parseServerURL,
        appId: settings.appId,
        masterKey: settings.masterKey,
        postgresURI: this.postgres.uri,
        demoPassword: settings.demoPassword,
      };
      await application.seedEmbeddedDemo(target, this.logger, () => signals.checkpoint());
      await application.indexDemoSearch(app, target, this.logger);
    }
    signals.checkpoint();
    const problems = await application.startupProblems(app);
    if (problems.length) throw new DemoConfigError(problems.join('; '));
    signals.checkpoint();
    readiness.markSeeded();

    process.stdout.write(
      demoBanner({
        settings,
        base: `http://${this.publicHost}:${port}`,
        parseServerURL: this.parseServerURL,
        mcpApiKey,
        embeddedPostgresURI: this.postgres?.uri,
      }),
    );
    await signals.running((signal) => this.shutdown(signal, readiness));
  }

  /** Embedded PostgreSQL (loading the application meanwhile), then Parse Server on it at /parse. */
  protected async startEmbedded(settings: EmbeddedSettings): Promise<Application> {
    const clusterDir = join(settings.dataDir, 'postgres');
    const stale = await stopStalePostgres(clusterDir);
    if (stale !== undefined) {
      this.logger.log(`Stopped PostgreSQL (PID ${stale}) left running by a demo that did not stop`);
    }
    this.signals.checkpoint();
    const { port: postgresPort, moved } = await postgresPortFor(settings.dataDir);
    if (moved !== undefined) {
      this.logger.warn(
        `PostgreSQL port ${moved} of this DATA_DIR is taken by another program; using ${postgresPort}. Update POSTGRES_URI where a client keeps it.`,
      );
    }
    this.logger.log(`Starting embedded PostgreSQL in ${clusterDir} on port ${postgresPort}`);
    let spawned!: () => void;
    const firstOutput = new Promise<void>((resolve) => (spawned = resolve));
    const postgresStarting = startEmbeddedPostgres({
      dataDir: clusterDir,
      port: postgresPort,
      // Its first output line means initdb (or postgres) is running in its own process.
      log: () => spawned(),
      // The host stops it after the HTTP drain (see shutdown), and a terminal's Ctrl-C reaches
      // only this process: PostgreSQL runs in a process group of its own.
      handleSignals: false,
      detached: true,
    });
    const settled = postgresStarting.then(
      () => undefined,
      () => undefined,
    );
    await Promise.race([firstOutput, settled]);
    // Loading the application overlaps initdb and the cluster's start. PostgreSQL is awaited even
    // when loading fails, so abort() stops it.
    let loadError: unknown;
    const application = await loadApplication().catch((error: unknown) => {
      loadError = error;
      return undefined;
    });
    this.postgres = await postgresStarting;
    if (!application) throw loadError;
    this.application = application;
    this.signals.checkpoint();
    this.parseServerURL = `http://${this.publicHost}:${settings.port}/parse`;
    this.parse = await startParseServer({
      databaseURI: this.postgres.uri,
      appId: settings.appId,
      masterKey: settings.masterKey,
      // No client key: like most Parse apps, clients identify with the application id alone.
      serverURL: this.parseServerURL,
      // Tenancy enforced by Parse itself, for clients that may write through /parse.
      cloud: application.registerTenantGuard,
      // The demo's classes, complete before anything can read them: the example app's module
      // reads the schemas as soon as Parse answers, which can be before the seed reaches them.
      classes: DEMO_SCHEMAS,
      // Changes to these classes reach LiveQuery (MCP resource subscriptions watch them).
      extra: { liveQuery: { classNames: DEMO_LIVE_QUERY_CLASSES } },
    });
    this.signals.checkpoint();
    this.mountParse(this.parse);
    return application;
  }

  /** Mounted before Nest registers its body parsers: Parse Server parses its own requests. */
  protected mountParse(parse: ParseServerHost): void {
    this.server.use('/parse', parse.app);
    // Parse Server has answered 500 already and passes the error on only to have it logged: one
    // plain line, and none while stopping (its pool is closed under requests still running).
    this.server.use(
      '/parse',
      (error: unknown, _req: unknown, res: Response, _next: NextFunction) => {
        if (!res.headersSent) res.status(500).json({ code: 1, error: 'Internal server error.' });
        if (!this.stopping && !this.signals.received) {
          this.logger.error(`Parse Server: ${describeError(error)}`);
        }
      },
    );
  }

  /** An existing Parse Server: a wrong URL or master key is one clear error now, not one per call. */
  protected async connectExternal(settings: ExternalSettings): Promise<Application> {
    const application = await loadApplication();
    this.application = application;
    this.parseServerURL = settings.serverURL;
    const problems = await application.checkParse({
      serverURL: settings.serverURL,
      appId: settings.appId,
      masterKey: settings.masterKey,
      javascriptKey: settings.javascriptKey,
    });
    if (problems.length) throw new DemoConfigError(problems.join('; '));
    return application;
  }

  /**
   * Drains the MCP endpoint (refuse new calls, finish or cancel those in flight), then closes the
   * HTTP server; Parse Server and PostgreSQL stop after it.
   */
  protected async shutdown(signal: string, readiness: ReadinessService): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const { shutdownGraceMs } = this.settings;
    const deadline = shutdownGraceMs + SHUTDOWN_MARGIN_MS;
    setTimeout(() => {
      this.logger.error(`Shutdown took longer than ${deadline} ms; exiting anyway`);
      process.exit(1);
    }, deadline).unref();
    this.logger.log(`${signal} received, shutting down (grace period ${shutdownGraceMs} ms)`);
    readiness.markShuttingDown();
    await this.app?.close().catch((e: unknown) => this.logger.error(`HTTP stop: ${String(e)}`));
    await this.cleanup();
    this.logger.log('Stopped');
    process.exit(0);
  }

  /** Start-up failed, or a signal stopped it at a step boundary (not a failure then). */
  protected async abort(error: unknown): Promise<void> {
    if (!this.signals.received) {
      await this.app?.close().catch(() => undefined);
      await this.cleanup();
      throw error;
    }
    if (!(error instanceof StartupInterrupted)) {
      this.logger.log(`The interrupted start-up step ended with: ${describeError(error)}`);
    }
    try {
      if (this.app && this.application) {
        this.app.get(this.application.ReadinessService).markShuttingDown();
      }
    } catch {
      // not created yet
    }
    await this.app?.close().catch((e: unknown) => this.logger.error(`HTTP stop: ${String(e)}`));
    await this.cleanup();
    this.logger.log('Stopped');
    process.exit(0);
  }

  /**
   * Once only: shutdown() and abort() can both reach it (Parse Server's pool cannot be ended
   * twice).
   */
  protected cleanup(): Promise<void> {
    return (this.cleaning ??= (async () => {
      await this.liveQuery
        ?.shutdown()
        .catch((e: unknown) => this.logger.error(`LiveQuery stop: ${String(e)}`));
      await this.parse
        ?.shutdown()
        .catch((e: unknown) => this.logger.error(`Parse Server stop: ${String(e)}`));
      await this.postgres
        ?.stop()
        .catch((e: unknown) => this.logger.error(`PostgreSQL stop: ${String(e)}`));
      await this.lock.release();
    })());
  }
}
