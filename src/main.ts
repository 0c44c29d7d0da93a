import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { AppModule } from './app.module';
import { DemoConfigError, loadDemoSettings } from './config/demo-config';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded/embedded-postgres';
import { startParseServer, type ParseServerHost } from './embedded/parse-server-host';
import { ParseAdminClient } from './demo/seed/parse-admin-client';
import { seedDemoData } from './demo/seed/demo-seeder';

const logger = new Logger('Demo');

async function main(): Promise<void> {
  const settings = await loadDemoSettings();
  const server = express();
  let postgres: RunningPostgres | undefined;
  let parse: ParseServerHost | undefined;
  const publicHost =
    settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;
  let parseServerURL: string;

  if (settings.mode === 'embedded') {
    postgres = await startEmbeddedPostgres({
      dataDir: join(settings.dataDir, 'postgres'),
      log: () => undefined,
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
  }

  const mcpApiKey = settings.mcpApiKey ?? randomBytes(18).toString('base64url');
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({
      settings,
      parseServerURL,
      mcpApiKey,
      postgresURI:
        postgres?.uri ?? (settings.mode === 'external' ? settings.postgresURI : undefined),
    }),
    new ExpressAdapter(server),
    { logger: ['log', 'warn', 'error'] },
  );
  app.enableShutdownHooks();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal} received, shutting down`);
    await app.close().catch((e: unknown) => logger.error(String(e)));
    await parse?.shutdown().catch((e: unknown) => logger.error(String(e)));
    await postgres?.stop().catch((e: unknown) => logger.error(String(e)));
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
  }

  const lines = [
    '',
    `  nestjs-parse-agent demo is up (${settings.mode === 'embedded' ? 'embedded PostgreSQL + Parse Server' : 'existing Parse Server'})`,
    `  Health:      ${base}/health`,
    `  Parse URL:   ${parseServerURL}   app id: ${settings.appId}`,
    `  MCP URL:     ${base}/mcp   (Streamable HTTP; see docs/mcp-endpoint.md)`,
    `  Analytics:   ${postgres || (settings.mode === 'external' && settings.postgresURI) ? 'direct PostgreSQL path (row ACL, CLP and protectedFields enforced in SQL)' : 'Parse REST only (set POSTGRES_URI for the direct PostgreSQL path)'}`,
    `  MCP auth:    Authorization: Bearer <Parse session token>   or   X-MCP-API-Key: ${mcpApiKey}${settings.mcpApiKey ? ' (from MCP_API_KEY)' : ' (generated; set MCP_API_KEY to fix it)'}`,
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
}

main().catch((error: unknown) => {
  if (error instanceof DemoConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(
      `Failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
  process.exit(1);
});
