import { createServer } from 'node:net';
import { DemoConfigError } from './demo-config';

/**
 * Fails at once when the demo's port is taken. Otherwise the start-up would carry on and talk to
 * whatever listens there (another demo's Parse Server, say), and its refusal would read as a wrong
 * setting: "refused parse.masterKey" from a server that was never this demo's.
 */
export async function assertPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  const outcome = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ port, host, exclusive: true }, () => resolve(undefined));
  });
  if (!outcome) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return;
  }
  if (outcome.code === 'EADDRINUSE') {
    throw new DemoConfigError(
      `port ${port} is in use (something already listens on ${host}:${port}, perhaps another demo); set PORT to a free port, e.g. PORT=${port + 1} npm start.`,
    );
  }
  if (outcome.code === 'EACCES') {
    throw new DemoConfigError(
      `port ${port} on ${host} needs privileges this process does not have; set PORT to a port above 1023.`,
    );
  }
  if (outcome.code === 'EADDRNOTAVAIL') {
    throw new DemoConfigError(
      `HOST ${host} is not an address of this machine; set HOST to one (127.0.0.1 or 0.0.0.0).`,
    );
  }
  throw new DemoConfigError(
    `cannot listen on ${host}:${port} (${outcome.code ?? outcome.message}).`,
  );
}
