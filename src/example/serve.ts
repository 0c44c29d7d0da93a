import type { LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import type { Express } from 'express';
import { ParseAgentStartupCheck, type ParseConnectionConfig } from 'nestjs-parse-agent';
import { AppModule } from './app.module';
import type { ExampleRuntime } from './config/example.config';
import { checkParse, DEMO_PARSE_CONNECTION, ReadinessService } from './health/readiness.service';

export { checkParse, ReadinessService };

/**
 * The example's Nest application on the host's Express server (what the host mounted on it, such
 * as an in-process Parse Server, stays in front of Nest's body parsers).
 */
export function createExampleApp(
  runtime: ExampleRuntime,
  server: Express,
  logger: LoggerService,
): Promise<NestExpressApplication> {
  return NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(runtime),
    new ExpressAdapter(server),
    // Keep-alive sockets must not hold the process after the drain answered every call.
    { logger, forceCloseConnections: true },
  );
}

/**
 * What keeps the listening app from serving a user, once the library's own start-up check (master
 * key, direct PostgreSQL path) has seen Parse answer: the app's own master-key read of Parse.
 */
export async function startupProblems(app: NestExpressApplication): Promise<string[]> {
  await app.get(ParseAgentStartupCheck).ready();
  return checkParse(app.get<ParseConnectionConfig>(DEMO_PARSE_CONNECTION));
}
