import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export type UpstreamMode = 'forward' | 'stall' | 'down';

/**
 * A loopback TCP front for a real upstream (the test Parse Server), switchable at run time:
 * `forward` pipes to it, `stall` accepts and never answers, `down` resets every connection.
 * Modes apply to new connections; a stalled connection stays stalled until the client drops it.
 */
export class SwitchableUpstream {
  mode: UpstreamMode = 'forward';
  /** Connections accepted. */
  accepted = 0;
  protected server?: Server;
  protected readonly sockets = new Set<Socket>();

  constructor(protected readonly target: { host: string; port: number }) {}

  async start(): Promise<string> {
    this.server = createServer((socket) => {
      this.accepted++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      if (this.mode === 'down') return void socket.resetAndDestroy();
      if (this.mode === 'stall') {
        // Read and ignore: the request arrives, no answer ever leaves. Reading also lets us see
        // the client's FIN when it gives up.
        socket.resume();
        return;
      }
      const upstream = createConnection(this.target);
      upstream.on('error', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
      socket.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Connections currently open (stalled ones the client has not dropped included). */
  get open(): number {
    return this.sockets.size;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
