/**
 * One MCP node with resource subscriptions in a process of its own (so a suite can SIGKILL it): the
 * demo's models, auth (ParseAgentAuthGuard, tenant from the tenant role) and agent factory, on the
 * Parse Server PARSE_URL with its LiveQuery server (same HTTP server), sessions and subscriptions
 * in the Redis REDIS_URL under KEY_PREFIX; LIVE_PER_SESSION caps subscriptions per session.
 * Listens on 127.0.0.1:LISTEN_PORT (any free port when 0) and prints `LISTENING <url>`.
 */
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { ParseAgentAuthGuard, ParseAgentModule } from 'nestjs-parse-agent';
import { LiveQueryHost } from 'nestjs-parse-agent/nest/live-query.host';
import { agentOptionsFor, DEMO_TENANT_SOURCE } from '../../src/example/auth/agent-factory';
import { CORE_MODELS } from '../../src/example/models';

async function main(): Promise<void> {
  const env = process.env;
  const moduleRef = await Test.createTestingModule({
    imports: [
      ParseAgentModule.forRoot({
        parse: {
          serverURL: env.PARSE_URL!,
          appId: env.PARSE_TEST_APP_ID!,
          masterKey: env.PARSE_TEST_MASTER_KEY!,
          javascriptKey: env.PARSE_TEST_JAVASCRIPT_KEY,
        },
        redis: { url: env.REDIS_URL!, keyPrefix: env.KEY_PREFIX! },
        models: CORE_MODELS,
        unregisteredClasses: 'hidden',
        defaults: { permissions: 'readonly' },
        rateLimiter: { check: () => undefined },
        suppressSecurityBanners: true,
        auth: { apiKey: env.OPERATOR_KEY!, tenant: DEMO_TENANT_SOURCE },
        agentFactory: (request) => agentOptionsFor(request),
        liveQuery: {
          classNames: ['Order'],
          maxSubscriptionsPerSession: Number(env.LIVE_PER_SESSION ?? 100),
          debounceMs: 50,
        },
        mcp: {
          guards: [ParseAgentAuthGuard],
          initializeRateLimit: false,
          heartbeatIntervalMs: 500,
        },
      }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({
    logger: ['warn', 'error', 'log'],
    forceCloseConnections: true,
  });
  await app.listen(Number(env.LISTEN_PORT ?? 0), '127.0.0.1');
  if (!(await app.get(LiveQueryHost).ready)) throw new Error('LiveQuery did not answer');
  const { port } = app.getHttpServer().address() as AddressInfo;
  process.stdout.write(`LISTENING http://127.0.0.1:${port}/mcp\n`);
  process.stdin.on('end', () => void app.close().finally(() => process.exit(0)));
  process.stdin.resume();
}

main().catch((error: unknown) => {
  process.stderr.write(`live node failed to start: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
