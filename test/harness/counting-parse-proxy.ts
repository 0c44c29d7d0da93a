import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingParseProxy {
  /** The proxy's Parse URL: same mount path as the real server, on the proxy's port. */
  serverURL: string;
  /** Requests that reached the real Parse Server, by method and path (query string dropped). */
  count(method: string, path: string): number;
  reset(): void;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of the real test Parse Server that counts what it forwards:
 * a test points an app's `parse.serverURL` here and reads how many `/users/me` or `/logout`
 * round trips Parse actually received.
 */
export async function startCountingParseProxy(target: string): Promise<CountingParseProxy> {
  const upstream = new URL(target);
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const key = `${req.method} ${path}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    serverURL: `http://127.0.0.1:${port}${upstream.pathname}`,
    count: (method, path) =>
      seen.get(`${method} ${upstream.pathname.replace(/\/$/, '')}${path}`) ?? 0,
    reset: () => seen.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
