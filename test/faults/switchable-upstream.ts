import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export type UpstreamMode = 'forward' | 'stall' | 'down' | 'trickle';

/**
 * A loopback TCP front for a real upstream (the test Parse Server), switchable at run time:
 * `forward` pipes to it, `stall` accepts and never answers, `down` resets every connection,
 * `trickle` forwards the answer `trickleBytes` bytes every `trickleEveryMs` (slow but never silent).
 * Modes apply to new connections; a stalled connection stays stalled until the client drops it.
 * A client keeps idle keep-alive connections for reuse, and those go on forwarding: `cut()` drops
 * every open connection, so a new mode holds for the next request too (a Parse Server that goes
 * down closes its connections as well).
 */
export class SwitchableUpstream {
  mode: UpstreamMode = 'forward';
  trickleBytes = 256;
  trickleEveryMs = 100;
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
      socket.on('close', () => upstream.destroy());
      if (this.mode !== 'trickle') {
        socket.pipe(upstream).pipe(socket);
        return;
      }
      socket.pipe(upstream);
      let pending = Buffer.alloc(0);
      upstream.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
      });
      const timer = setInterval(() => {
        if (!pending.length || socket.destroyed) return;
        socket.write(pending.subarray(0, this.trickleBytes));
        pending = pending.subarray(this.trickleBytes);
      }, this.trickleEveryMs);
      socket.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Drops every open connection (the client's pooled keep-alive ones included). */
  cut(): void {
    for (const socket of this.sockets) socket.destroy();
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
