import { Subject, type Observable } from 'rxjs';
import type { CancellationBus, RequestId } from '../../ports/cancellation-bus';

/**
 * The calls a transport is running, from their start to their answer: what a shutdown waits for
 * and, after its grace period, cancels. Each call is tracked by its AbortController.
 */
export class CallsInFlight {
  protected readonly calls = new Set<AbortController>();
  protected readonly settled$ = new Subject<void>();

  get size(): number {
    return this.calls.size;
  }

  /** Tracks a call; returns its release (idempotent). */
  track(controller: AbortController): () => void {
    this.calls.add(controller);
    return () => {
      if (this.calls.delete(controller)) this.settled$.next();
    };
  }

  /** Aborts every call in flight with `reason` (their answers or silence follow from the signal). */
  abortAll(reason: string): void {
    for (const controller of [...this.calls]) controller.abort(reason);
  }

  /** Resolves when no call is in flight, or after `ms` (never, when `ms` is undefined). */
  whenIdle(ms?: number): Promise<void> {
    if (!this.calls.size) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      const subscription = this.settled$.subscribe(() => {
        if (!this.calls.size) done();
      });
      function done() {
        clearTimeout(timer);
        subscription.unsubscribe();
        resolve();
      }
    });
  }
}

/** One running call: the signal it runs under, and its release once it answered or was cancelled. */
export interface OpenCall {
  readonly controller: AbortController;
  /** Deregisters the call from the cancellation bus and from the calls in flight (idempotent). */
  release(): void;
}

export interface OpenCallOptions {
  calls: CallsInFlight;
  cancellations: CancellationBus;
  /** Where `notifications/cancelled` for this call is looked up; none: it cannot be cancelled by id. */
  scope: string | undefined;
  requestId: RequestId;
  /**
   * The end of the session the call runs in (`McpSession.ended$`): ending the session (DELETE,
   * expiry, on this node or, with a shared store, on any other) aborts the call.
   */
  sessionEnded?: Observable<void>;
}

/** The abort reason of a call whose session ended under it. */
export const SESSION_ENDED_REASON = 'session_ended';

/**
 * Starts a call: an AbortController that `notifications/cancelled` (by scope and request id, on
 * any node the bus reaches), the end of its session, the client leaving and shutdown all abort,
 * tracked until released.
 */
export function openCall(options: OpenCallOptions): OpenCall {
  const controller = new AbortController();
  const deregister =
    options.scope === undefined
      ? undefined
      : options.cancellations.register(options.scope, options.requestId, controller);
  const untrack = options.calls.track(controller);
  const abortOnEnd = () => {
    if (!controller.signal.aborted) controller.abort(SESSION_ENDED_REASON);
  };
  const sessionWatch = options.sessionEnded?.subscribe({ next: abortOnEnd, complete: abortOnEnd });
  let released = false;
  return {
    controller,
    release: () => {
      if (released) return;
      released = true;
      sessionWatch?.unsubscribe();
      deregister?.();
      untrack();
    },
  };
}

/**
 * The cancellation scope of a caller's calls: its principal and correlation id, so one caller can
 * never cancel another's call that happens to share a request id. None without a correlation id.
 */
export function cancellationScope(
  owner: string,
  correlationId: string | undefined,
): string | undefined {
  return correlationId ? `${owner}\u0000${correlationId}` : undefined;
}
