import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on: taken from the kernel, then let go. A connection to it is
 * refused (ECONNREFUSED), unlike a port fetch refuses by rule before any socket opens (9, 1...).
 */
export async function closedLocalPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
