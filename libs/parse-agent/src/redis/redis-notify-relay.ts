import { randomBytes } from 'node:crypto';
import type { JsonRpcNotification } from '../mcp/mcp-dispatcher.types';
import type { McpNotifier, McpNotifyRelay } from '../mcp/mcp-notifier';
import type { RedisConnection } from './redis-connection';

interface PushMessage {
  from: string;
  id: string;
  target: { sessionId?: string; principal?: string };
  message: JsonRpcNotification;
}

interface AckMessage {
  to: string;
  id: string;
}

/** How long a notify waits for another node to say it delivered (ms). */
const ACK_WAIT_MS = 500;

/**
 * McpNotifier across nodes: a notification no stream of this node took is published; the node
 * holding the session's (or principal's) listening stream delivers it and answers with an
 * acknowledgement, so `notify` says whether anyone received it, whichever node holds the stream.
 */
export class RedisNotifyRelay implements McpNotifyRelay {
  protected readonly channel: string;
  protected readonly ackChannel: string;
  protected readonly waiting = new Map<string, (delivered: boolean) => void>();
  protected readonly stops: Array<() => void> = [];

  constructor(
    protected readonly redis: RedisConnection,
    protected readonly notifier: McpNotifier,
  ) {
    this.channel = redis.key('notify');
    this.ackChannel = redis.key('notify-ack');
  }

  async start(): Promise<void> {
    this.stops.push(
      await this.redis.subscribe(this.channel, (text) => {
        const push = parse<PushMessage>(text);
        if (!push || typeof push.from !== 'string' || typeof push.id !== 'string') return;
        if (push.from === this.redis.nodeId) return;
        if (typeof push.message?.method !== 'string' || !push.target) return;
        if (!push.message.method.startsWith('notifications/')) return;
        if (!this.notifier.deliverLocally(push.target, push.message)) return;
        const ack: AckMessage = { to: push.from, id: push.id };
        void this.redis.publish(this.ackChannel, JSON.stringify(ack));
      }),
    );
    this.stops.push(
      await this.redis.subscribe(this.ackChannel, (text) => {
        const ack = parse<AckMessage>(text);
        if (ack?.to === this.redis.nodeId && typeof ack.id === 'string')
          this.waiting.get(ack.id)?.(true);
      }),
    );
    this.notifier.useRelay(this);
  }

  publish(
    target: { sessionId?: string; principal?: string },
    message: JsonRpcNotification,
  ): Promise<boolean> {
    const id = randomBytes(9).toString('base64url');
    const push: PushMessage = { from: this.redis.nodeId, id, target, message };
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), ACK_WAIT_MS);
      timer.unref();
      const finish = (delivered: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(delivered);
      };
      this.waiting.set(id, finish);
      this.redis.publish(this.channel, JSON.stringify(push)).then(
        (receivers) => {
          // Nobody else listens (false: Redis is down; 1: only this node's own subscriber).
          if (receivers === false || (!this.redis.cluster && receivers <= 1)) finish(false);
        },
        () => finish(false),
      );
    });
  }

  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
    for (const settle of [...this.waiting.values()]) settle(false);
    this.waiting.clear();
  }
}

function parse<T>(text: string): Partial<T> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null ? (value as Partial<T>) : undefined;
  } catch {
    return undefined;
  }
}
