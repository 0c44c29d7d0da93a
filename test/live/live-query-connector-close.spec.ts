import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ParseLiveQueryConnector } from 'nestjs-parse-agent/live/parse-live-query-connector';

/**
 * The `parse` SDK's LiveQueryClient, through our connector, against a real WebSocket endpoint on
 * loopback (an HTTP server that refuses upgrades, or accepts them with the RFC 6455 handshake):
 * closed while its socket is down and a reconnect is pending, the client must not come back. The
 * SDK's own close() leaves that reconnect armed; a LiveQuery server then holds a socket for nobody
 * (seen as a flaky teardown count in the console's live e2e).
 */
const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

describe('ParseLiveQueryConnector.close()', () => {
  let server: Server;
  let accept = false;
  let upgrades = 0;
  const open = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(404).end());
    server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      upgrades += 1;
      if (!accept) {
        // As a LiveQuery server that is down or restarting: the client errors and reconnects.
        socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const key = String(req.headers['sec-websocket-key']);
      const digest = createHash('sha1')
        .update(key + GUID)
        .digest('base64');
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          `Sec-WebSocket-Accept: ${digest}\r\n\r\n`,
      );
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => open.delete(socket));
      // Frames the client sends (a close frame included) are read and dropped; the client's
      // closing handshake times out or the socket ends, either way it goes.
      socket.on('data', (data: Buffer) => {
        if ((data[0] & 0x0f) === 0x8) socket.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    for (const socket of open) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const connector = () =>
    new ParseLiveQueryConnector({
      serverURL: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
      applicationId: 'app',
      masterKey: 'master',
    });

  const waitFor = async (done: () => boolean, ms = 5_000) => {
    const until = Date.now() + ms;
    while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  };

  it('closed while a reconnect is pending, opens no socket again though the server is back', async () => {
    accept = false;
    const downs: string[] = [];
    const connection = connector().open(
      { masterKey: true },
      { down: (why) => downs.push(why), restored: () => undefined },
    );
    // Refused: the SDK reported the socket down and scheduled a reconnect.
    await waitFor(() => downs.length > 0 && upgrades > 0);
    expect(downs.length).toBeGreaterThan(0);
    await connection.close();
    const after = upgrades;
    accept = true;
    // The SDK's first reconnects come within 1 s and 3 s: wait past both.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(upgrades - after).toBe(0);
    expect(open.size).toBe(0);
  }, 15_000);

  it('closed while up, lets its socket go and does not reconnect', async () => {
    accept = true;
    const before = upgrades;
    const connection = connector().open(
      { masterKey: true },
      { down: () => undefined, restored: () => undefined },
    );
    await waitFor(() => open.size === 1);
    expect(open.size).toBe(1);
    await connection.close();
    await waitFor(() => open.size === 0);
    expect(open.size).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(upgrades - before).toBe(1);
  }, 15_000);
});
