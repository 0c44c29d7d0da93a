import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import { Subject } from 'rxjs';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import type { SessionStore } from '../../ports/session-store';
import type { CallsInFlight } from '../shared/calls-in-flight';
import {
  SHUTDOWN_LINGER_MAX_MS,
  SHUTDOWN_LINGER_QUIET_MS,
  SHUTDOWN_SETTLE_MS,
} from './mcp-http.constants';
import { sendJsonRpcError } from './mcp-http-response';
import type { TransportLogger } from '../shared/transport-logger';

/** The answer of a call cut short by shutdown, and of calls arriving while the server drains. */
export const SHUTTING_DOWN_MESSAGE =
  'Server shutting down: the call was not completed; retry it shortly.';
export const SHUTTING_DOWN_CODE = -32000;
const SHUTDOWN_REASON = 'server_shutdown';

const netClose = NetServer.prototype.close;
/** After the listener closes, how long a just-accepted connection gets to send its request. */
const SHUTDOWN_IDLE_CLOSE_MS = 100;

export interface EndpointDrainOptions {
  calls: CallsInFlight;
  sessions: SessionStore;
  logger: TransportLogger;
  gracePeriodMs: number;
  /** The HTTP server the endpoint is mounted on (its listener is closed at the end). */
  httpServer?: () => Server | undefined;
}

/**
 * The endpoint's graceful stop. `shutdown$` tells every open response to finish: JSON calls and
 * SSE streams answer with the shutdown error, GET and listen streams close.
 */
export class EndpointDrain {
  readonly shutdown$ = new Subject<void>();
  protected draining?: Promise<void>;
  /** When a call last arrived during the drain (and was refused). */
  protected lastLateCall = 0;
  /** 503 answers waiting for the listener to close (set while lingering). */
  protected held?: Array<() => void>;

  constructor(protected readonly options: EndpointDrainOptions) {}

  /** Whether the endpoint is draining (new calls are refused with 503). */
  get active(): boolean {
    return this.draining !== undefined;
  }

  /**
   * Refuses new calls, gives those in flight the grace period, then cancels the rest through
   * their AbortSignal (each answered with a JSON-RPC error); open streams get a final message and
   * close. Late calls keep getting 503 until the endpoint has been quiet for a moment
   * (SHUTDOWN_LINGER_QUIET_MS), so none is cut off by the server closing its connections.
   * Idempotent.
   */
  drain(gracePeriodMs = this.options.gracePeriodMs): Promise<void> {
    const { calls, logger } = this.options;
    this.draining ??= (async () => {
      if (calls.size) {
        logger.log?.(
          `Shutting down: waiting up to ${gracePeriodMs} ms for ${calls.size} call(s) in flight`,
        );
      }
      await calls.whenIdle(gracePeriodMs);
      if (calls.size) {
        logger.warn(
          `Shutting down: cancelling ${calls.size} call(s) still running after ${gracePeriodMs} ms`,
        );
        calls.abortAll(SHUTDOWN_REASON);
        // The error answers go out now; the tools' own I/O stops through the aborted signal.
        this.shutdown$.next();
        await calls.whenIdle(SHUTDOWN_SETTLE_MS);
      }
      this.shutdown$.next();
      await this.options.sessions.clear();
      // From here late calls wait for their 503 until the listener is closed: a client waiting
      // for an answer opens no new connection, so none sits in the kernel's accept queue (to be
      // reset) at the instant the listener closes; those that reconnect then are refused cleanly.
      this.held = [];
      await this.linger();
      await this.closeListener();
      this.answerHeld();
    })();
    return this.draining;
  }

  /** 503 for calls arriving while the endpoint drains (true when sent); the connection closes. */
  refuse(res: ServerResponse, id: JsonRpcId = null): boolean {
    if (!this.active) return false;
    this.lastLateCall = Date.now();
    const answer = () =>
      sendJsonRpcError(res, 503, SHUTTING_DOWN_CODE, SHUTTING_DOWN_MESSAGE, {
        id,
        headers: { Connection: 'close', 'Retry-After': '1' },
      });
    if (this.held) this.held.push(answer);
    else answer();
    return true;
  }

  /** Late calls held during the linger (at most SHUTDOWN_LINGER_MAX_MS): answered now. */
  protected answerHeld(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const answer of held) answer();
  }

  /** Waits until no late call has been refused for SHUTDOWN_LINGER_QUIET_MS (bounded). */
  protected async linger(): Promise<void> {
    const started = Date.now();
    for (;;) {
      const now = Date.now();
      const quietFor = now - Math.max(started, this.lastLateCall);
      if (quietFor >= SHUTDOWN_LINGER_QUIET_MS || now - started >= SHUTDOWN_LINGER_MAX_MS) return;
      await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_LINGER_QUIET_MS - quietFor));
    }
  }

  /**
   * Stops accepting connections, closes the idle ones, and waits (bounded) until every other
   * connection has ended after its answer (each late call gets 503 with Connection: close). The
   * host's own close then finds no socket to destroy under a request being sent.
   */
  protected closeListener(): Promise<void> {
    const server = this.options.httpServer?.();
    if (!server?.listening) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, SHUTDOWN_LINGER_MAX_MS);
      // net.Server's close: http.Server's would also close every connection without a request
      // parsed yet, including one just accepted whose request is on its way (a reset for it).
      netClose.call(server, done);
      // Closed to new connections: the late calls held meanwhile get their 503 now.
      this.answerHeld();
      // A connection accepted just now sends its request within a moment and gets the 503; those
      // left idle after that (kept-alive, nothing sent) are closed then.
      const idle = setTimeout(() => server.closeIdleConnections?.(), SHUTDOWN_IDLE_CLOSE_MS);
      function done() {
        clearTimeout(timer);
        clearTimeout(idle);
        resolve();
      }
    });
  }
}
