import { ParseRequestError } from 'nestjs-parse-agent';
import { ParseRestClient } from 'nestjs-parse-agent/data/parse-rest/parse-rest-client';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A keep-alive socket the server closes as idle just as the client reuses it: the request is reset
 * before any answer. Before, that failed the tool call ("Parse Server unreachable") about once per
 * keepAliveTimeout under load (seen as ECONNRESET in CI). Now the client sends it once more on a
 * new socket. A real HTTP server plays Parse Server's part: it answers the first request on each
 * socket and resets the socket on the next one, which is what the idle race looks like on the wire.
 */
describe('ParseRestClient and a keep-alive socket closed under it', () => {
  let server: Server;
  let url: string;
  const seen: Array<{ socket: number; method?: string; path?: string }> = [];
  let resetEvery = true;

  beforeAll(async () => {
    let sockets = 0;
    const served = new WeakMap<Socket, number>();
    server = createServer((req: IncomingMessage, res) => {
      const socket = req.socket;
      const id = served.get(socket) ?? 0;
      const number = (socket as Socket & { pa_id?: number }).pa_id!;
      seen.push({ socket: number, method: req.method, path: req.url });
      if (id >= 1 && resetEvery) {
        socket.destroy(); // as if the idle timer fired: no answer, a reset
        return;
      }
      served.set(socket, id + 1);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ results: [{ objectId: `r${seen.length}` }] }));
    });
    server.on('connection', (socket: Socket & { pa_id?: number }) => {
      socket.pa_id = ++sockets;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/parse`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
    resetEvery = true;
  });

  const client = () =>
    new ParseRestClient({ serverURL: url, appId: 'app', masterKey: 'mk', requestTimeoutMs: 2_000 });

  it('sends a request reset on a reused socket once more, on a new socket', async () => {
    const parse = client();
    try {
      expect(await parse.request('GET', '/classes/A', undefined, { masterKey: true })).toEqual({
        results: [{ objectId: 'r1' }],
      });
      // The next request reuses the first socket; the server resets it; the retry answers.
      const second = await parse.request('POST', '/classes/A', { a: 1 }, { masterKey: true });
      expect(second).toEqual({ results: [{ objectId: 'r3' }] });
      // (The client sends reads as POST with _method, so the sockets tell the story.)
      expect(seen.map((s) => s.socket)).toEqual([1, 1, 2]);
    } finally {
      parse.close();
    }
  });

  it('retries once only: a second reset is the error, not a loop', async () => {
    const parse = client();
    try {
      await parse.request('GET', '/classes/A', undefined, { masterKey: true });
      // Every socket now resets its second request, and the retry's new socket answers its first:
      // make the new socket reset too by serving nothing at all.
      resetEvery = true;
      const realHandler = server.listeners('request')[0] as (...a: unknown[]) => void;
      server.removeAllListeners('request');
      server.on('request', (req: IncomingMessage) => {
        seen.push({ socket: -1, method: req.method });
        req.socket.destroy();
      });
      try {
        await expect(
          parse.request('GET', '/classes/A', undefined, { masterKey: true }),
        ).rejects.toBeInstanceOf(ParseRequestError);
        expect(seen.filter((s) => s.socket === -1)).toHaveLength(2);
      } finally {
        server.removeAllListeners('request');
        server.on('request', realHandler);
      }
    } finally {
      parse.close();
    }
  });

  it('a reset on a fresh socket is not retried (the server saw a first request and failed)', async () => {
    const parse = client();
    const realHandler = server.listeners('request')[0] as (...a: unknown[]) => void;
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage) => {
      seen.push({ socket: 0, method: req.method });
      req.socket.destroy();
    });
    try {
      await expect(
        parse.request('POST', '/classes/A', { a: 1 }, { masterKey: true }),
      ).rejects.toBeInstanceOf(ParseRequestError);
      expect(seen).toHaveLength(1);
    } finally {
      server.removeAllListeners('request');
      server.on('request', realHandler);
      parse.close();
    }
  });
});
