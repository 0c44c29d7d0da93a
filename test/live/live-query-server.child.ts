import express from 'express';
import type { Server } from 'node:http';
import { registerTenantGuard } from '../../src/embedded/cloud/tenant-guard';
import { loadParseServer, startParseServer } from '../../src/embedded/parse-server-host';

/** What the suites read of Parse's own LiveQuery server: its sockets and their subscriptions. */
interface LiveQueryServerLike {
  clients: Map<
    string,
    {
      sessionToken?: string;
      hasMasterKey: boolean;
      subscriptionInfos: Map<unknown, unknown>;
      parseWebSocket: { ws: { terminate(): void } };
    }
  >;
  shutdown(): Promise<void>;
}

/**
 * A Parse Server on the test run's database (the demo's cloud code too) with LiveQuery enabled for
 * LIVE_CLASSES on its own HTTP server, in a process of its own (parse-server loads adapters with a
 * dynamic import, which jest's workers cannot run). Beside /parse it answers the suite:
 * GET /__live/stats[?token=] counts the LiveQuery server's sockets and subscriptions; POST
 * /__live/drop cuts every LiveQuery socket (what a LiveQuery restart looks like to clients); POST
 * /__live/rest-down?ms= makes /parse answer 503 for that long (Parse briefly unavailable). Prints
 * `LISTENING <port>`.
 */
async function main(): Promise<void> {
  process.env.TESTING = '1';
  const port = Number(process.env.LISTEN_PORT);
  const serverURL = `http://127.0.0.1:${port}/parse`;
  const appId = process.env.PARSE_TEST_APP_ID!;
  const masterKey = process.env.PARSE_TEST_MASTER_KEY!;
  const classNames = (process.env.LIVE_CLASSES ?? '').split(',');
  const pubSub = process.env.LIVE_REDIS_URL ? { redisURL: process.env.LIVE_REDIS_URL } : {};
  const parse = await startParseServer({
    databaseURI: process.env.PARSE_TEST_DATABASE_URI!,
    appId,
    masterKey,
    javascriptKey: process.env.PARSE_TEST_JAVASCRIPT_KEY,
    serverURL,
    cloud: registerTenantGuard,
    extra: { liveQuery: { classNames, ...pubSub } },
  });
  const { ParseServer } = loadParseServer() as unknown as {
    ParseServer: {
      createLiveQueryServer(
        server: Server,
        config: Record<string, unknown>,
        parseConfig: Record<string, unknown>,
      ): Promise<LiveQueryServerLike>;
    };
  };
  const lqConfig = { appId, masterKey, serverURL, ...pubSub };
  const app = express();
  app.get('/__live/stats', (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    const clients = [...live.clients.values()].filter(
      (c) => token === undefined || c.sessionToken === token,
    );
    res.json({
      sockets: clients.length,
      subscriptions: clients.reduce((n, c) => n + c.subscriptionInfos.size, 0),
      master: clients.filter((c) => c.hasMasterKey).length,
    });
  });
  // What a LiveQuery restart looks like to its clients: every socket cut at once.
  app.post('/__live/drop', (_req, res) => {
    const clients = [...live.clients.values()];
    for (const client of clients) client.parseWebSocket.ws.terminate();
    res.json({ dropped: clients.length });
  });
  // Parse REST briefly unavailable (a restart behind a proxy), LiveQuery untouched.
  let restDownUntil = 0;
  app.post('/__live/rest-down', (req, res) => {
    restDownUntil = Date.now() + Number(req.query.ms ?? 0);
    res.json({ until: restDownUntil });
  });
  app.use('/parse', (_req, res, next) => {
    if (Date.now() >= restDownUntil) return next();
    res.status(503).json({ code: 1, error: 'Parse Server is briefly unavailable (test)' });
  });
  app.use('/parse', parse.app);
  const http = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
    s.keepAliveTimeout = 0;
  });
  const live: LiveQueryServerLike = await ParseServer.createLiveQueryServer(http, lqConfig, {
    appId,
  });
  process.stdout.write(`LISTENING ${port}\n`);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

main().catch((error: unknown) => {
  process.stderr.write(`live query server failed: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
