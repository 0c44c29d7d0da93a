'use strict';
// The system under test, in its own process: the Nest app with the MCP endpoint (built library) in
// front of the Parse Server process. Prints one JSON line with its port when ready. (The SDK
// comparison server runs in its own process, bench/sdk-server.js, so it does not share this heap.)
require('reflect-metadata');
const express = require('express');
const { NestFactory } = require('@nestjs/core');
const { ExpressAdapter } = require('@nestjs/platform-express');
const { Module } = require('@nestjs/common');
const lib = require('nestjs-parse-agent');
const { suppressSecurityBanners } = require('nestjs-parse-agent/ops');
const { KeyedSlidingWindowRateLimiter } = require('nestjs-parse-agent/stores');
const { RedisConnection, RedisRateLimiter } = require('nestjs-parse-agent/redis');
const { findFreePort } = require('../dist/src/embedded/free-port');
const { ParseAdminClient } = require('../dist/src/embedded/seed/parse-admin-client');
const { seedDemoData } = require('../dist/src/embedded/seed/demo-seeder');
const models = require('../dist/src/example/models');

const APP_ID = process.env.BENCH_APP_ID;
const MASTER_KEY = process.env.BENCH_MASTER_KEY;

async function main() {
  const port = await findFreePort();
  const serverURL = process.env.BENCH_PARSE_URL;
  // BENCH_PLATFORM=fastify: the same app on @nestjs/platform-fastify (bench/fastify.js).
  const fastify = process.env.BENCH_PLATFORM === 'fastify';
  const adapter = fastify
    ? new (require('@nestjs/platform-fastify').FastifyAdapter)()
    : new ExpressAdapter(express());
  const root = adapter.getInstance();
  const sendJson = (res, body) => (fastify ? res.send(body) : res.json(body));
  root.get('/bench/rss', (_req, res) => sendJson(res, { rss: process.memoryUsage().rss }));
  // Heap after a full GC when the process runs with --expose-gc (the soak), so the slope is the
  // live set, not garbage waiting for collection.
  root.get('/bench/mem', (_req, res) => {
    if (typeof global.gc === 'function') global.gc();
    const { rss, heapUsed } = process.memoryUsage();
    sendJson(res, { rss, heapUsed });
  });

  suppressSecurityBanners();
  // BENCH_REDIS_URL: this node shares limits and sessions on Redis (bench/redis.js runs two).
  const redisUrl = process.env.BENCH_REDIS_URL;
  const redis = redisUrl ? { url: redisUrl, keyPrefix: process.env.BENCH_REDIS_PREFIX } : undefined;
  const rateLimiter = redis
    ? new RedisRateLimiter(RedisConnection.fromOptions(redis), {
        limit: 10_000_000,
        window: 60,
      })
    : new KeyedSlidingWindowRateLimiter(10_000_000, 60);
  class BenchModule {}
  Module({
    imports: [
      lib.ParseAgentModule.forRoot({
        parse: { serverURL, appId: APP_ID, masterKey: MASTER_KEY },
        models: [...models.CORE_MODELS, models.SupportTicket],
        rateLimiter,
        redis,
        // x-bench-tools-profile: the agent's named tool profile (bench:tokens lists each one).
        agentFactory: (request) => {
          const profile = request.headers['x-bench-tools-profile'];
          return { permissions: 'readonly', ...(profile ? { tools: profile } : {}) };
        },
        mcp: {
          path: '/mcp',
          heartbeatIntervalMs: 2000,
          // BENCH_RESUMABLE=1: streaming calls keep their events (in Redis with BENCH_REDIS_URL).
          resumable: process.env.BENCH_RESUMABLE === '1',
        },
      }),
    ],
  })(BenchModule);
  const app = await NestFactory.create(BenchModule, adapter, {
    logger: ['error'],
  });
  const tools = app.get(lib.ToolRegistry);
  tools.register({
    name: 'bench_wait',
    description: 'Waits (for the idle-stream benchmark) until its time is up or it is cancelled.',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } },
    timeout: 600,
    handler: (args, { signal }) =>
      new Promise((resolve) => {
        const t = setTimeout(() => resolve({ waited: args.ms }), args.ms ?? 10_000);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve({ aborted: true });
        });
      }),
  });
  tools.register({
    name: 'bench_echo',
    description: 'Answers at once (measures the transport and stores, not Parse).',
    handler: () => ({ ok: true }),
  });
  await app.listen(port, '127.0.0.1');

  const admin = new ParseAdminClient(serverURL, APP_ID, MASTER_KEY);
  if (!process.env.BENCH_SKIP_SEED) await seedDemoData(admin, 'bench-password');

  process.stdout.write(
    JSON.stringify({
      ready: true,
      port,
      serverURL,
      appId: APP_ID,
      masterKey: MASTER_KEY,
    }) + '\n',
  );
}

main().catch((e) => {
  process.stderr.write(`bench server failed: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
process.on('SIGINT', () => process.exit(0));
