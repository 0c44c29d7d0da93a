import type { CancellationBus, RequestId } from './cancellation-bus';

/**
 * In-flight calls a `notifications/cancelled` may abort, keyed by scope (principal + correlation id)
 * and JSON-RPC request id (`42` and `"42"` are different ids). The latest registration for a key
 * wins; a stale deregistration never removes a newer call. Process-local.
 */
export class InMemoryCancellationBus implements CancellationBus {
  protected readonly entries = new Map<string, AbortController>();

  get size(): number {
    return this.entries.size;
  }

  /** Registers the call; returns its deregistration (idempotent, owner-checked). */
  register(scope: string, requestId: RequestId, controller: AbortController): () => void {
    const key = this.key(scope, requestId);
    this.entries.set(key, controller);
    return () => {
      if (this.entries.get(key) === controller) this.entries.delete(key);
    };
  }

  /** Aborts the matching call with `reason`; false (silently) when nothing matches. */
  cancel(scope: string, requestId: RequestId, reason: string): boolean {
    const key = this.key(scope, requestId);
    const controller = this.entries.get(key);
    if (!controller) return false;
    this.entries.delete(key);
    if (!controller.signal.aborted) controller.abort(reason);
    return true;
  }

  protected key(scope: string, requestId: RequestId): string {
    return `${scope}\u0000${JSON.stringify(requestId)}`;
  }
}
