import type { CancellationBus, RequestId } from '../ports/cancellation-bus';
import { InMemoryCancellationBus } from '../ports/in-memory-cancellation-bus';
import type { RedisConnection } from './redis-connection';

interface CancelMessage {
  from: string;
  scope: string;
  requestId: RequestId;
  reason: string;
}

/**
 * Calls register on the node that runs them (a process-local table, so a client disconnect still
 * aborts at once); a `notifications/cancelled` that matches nothing here is published, and the node
 * running the call aborts it. Scopes carry the principal, so a published cancel only reaches the
 * same principal's call.
 */
export class RedisCancellationBus implements CancellationBus {
  protected readonly localCalls = new InMemoryCancellationBus();
  protected readonly channel: string;
  protected unsubscribe?: () => void;

  constructor(protected readonly redis: RedisConnection) {
    this.channel = redis.key('cancel');
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.redis.subscribe(this.channel, (text) => {
      const message = parseCancel(text);
      if (!message || message.from === this.redis.nodeId) return;
      this.localCalls.cancel(message.scope, message.requestId, message.reason);
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  register(scope: string, requestId: RequestId, controller: AbortController): () => void {
    return this.localCalls.register(scope, requestId, controller);
  }

  /** True when the call ran here, or the cancel reached at least one other node. */
  async cancel(scope: string, requestId: RequestId, reason: string): Promise<boolean> {
    if (this.localCalls.cancel(scope, requestId, reason)) return true;
    const message: CancelMessage = { from: this.redis.nodeId, scope, requestId, reason };
    const receivers = await this.redis.publish(this.channel, JSON.stringify(message));
    // The publisher's own subscriber counts as a receiver.
    return typeof receivers === 'number' && receivers > 1;
  }

  /** Calls registered on this node. */
  get localSize(): number {
    return this.localCalls.size;
  }
}

function parseCancel(text: string): CancelMessage | undefined {
  try {
    const value = JSON.parse(text) as Partial<CancelMessage>;
    const idOk =
      typeof value.requestId === 'string' ||
      typeof value.requestId === 'number' ||
      value.requestId === null;
    if (typeof value.scope !== 'string' || typeof value.reason !== 'string' || !idOk) {
      return undefined;
    }
    return value as CancelMessage;
  } catch {
    return undefined;
  }
}
