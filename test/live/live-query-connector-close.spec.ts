import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { ParseLiveQueryConnector } from 'nestjs-parse-agent/live/parse-live-query-connector';

/**
 * The `parse` SDK's LiveQueryClient, through our connector, against a real WebSocket server on
 * loopback (the `ws` package the SDK itself uses): closed while the socket is down and a reconnect
 * is pending, the client must not come back. The SDK's own close() leaves that reconnect armed;
 * the LiveQuery server then holds a socket for nobody (seen as a flaky teardown count).
 */
describe('ParseLiveQueryConnector.close() while a reconnect is pending', () => {
  let server: WebSocketServer;
  let accept = false;
  let refused = 0;
  let accepted = 0;

  beforeAll(async () => {
    server = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      // Refuses the upgrade (HTTP 401) until `accept`: the client sees an error and schedules a
      // reconnect, as when a LiveQuery server is down or restarting.
      verifyClient: (_info, done) => {
        if (!accept) refused += 1;
        done(accept);
      },
    });
    server.on('connection', () => (accepted += 1));
    await new Promise((resolve) => server.once('listening', resolve));
  });

  afterAll(async () => {
    for (const socket of server.clients) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
  });

  it('opens no socket after it was closed, though the server answers again', async () => {
    const { port } = server.address() as AddressInfo;
    const connector = new ParseLiveQueryConnector({
      serverURL: `ws://127.0.0.1:${port}`,
      applicationId: 'app',
      masterKey: 'master',
    });
    const downs: string[] = [];
    const connection = connector.open(
      { masterKey: true },
      { down: (why) => downs.push(why), restored: () => undefined },
    );
    // Down: the upgrade was refused, so the SDK has a reconnect scheduled.
    const until = Date.now() + 5_000;
    while ((!downs.length || !refused) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(refused).toBeGreaterThan(0);
    expect(downs.length).toBeGreaterThan(0);
    await connection.close();
    accept = true;
    // The SDK's first reconnects come within 1 s and 3 s: wait past both.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(accepted).toBe(0);
  }, 15_000);

  it('a connection that is up still closes its socket (the server sees it go)', async () => {
    accept = true;
    const before = accepted;
    const { port } = server.address() as AddressInfo;
    const connector = new ParseLiveQueryConnector({
      serverURL: `ws://127.0.0.1:${port}`,
      applicationId: 'app',
      masterKey: 'master',
    });
    const connection = connector.open(
      { masterKey: true },
      {
        down: () => undefined,
        restored: () => undefined,
      },
    );
    const until = Date.now() + 5_000;
    while (accepted === before && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(accepted).toBe(before + 1);
    await connection.close();
    const gone = Date.now() + 5_000;
    while (server.clients.size && Date.now() < gone) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(server.clients.size).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(accepted).toBe(before + 1);
  }, 15_000);
});
