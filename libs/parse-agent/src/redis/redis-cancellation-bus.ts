import type { CancellationBus, ClientAnswer, RequestId } from '../ports/cancellation-bus';
import { InMemoryCancellationBus } from '../ports/in-memory-cancellation-bus';
import type { RedisConnection } from './redis-connection';

interface CancelMessage {
  from: string;
  scope: string;
  requestId: RequestId;
  reason: string;
}

interface AnswerMessage {
  from: string;
  sessionId: string;
  response: ClientAnswer;
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
  protected readonly answerChannel: string;
  protected readonly answerHandlers = new Set<
    (sessionId: string, response: ClientAnswer) => void
  >();
  protected unsubscribe?: () => void;
  protected unsubscribeAnswers?: () => void;

  constructor(protected readonly redis: RedisConnection) {
    this.channel = redis.key('cancel');
    this.answerChannel = redis.key('client-answer');
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.redis.subscribe(this.channel, (text) => {
      const message = parseCancel(text);
      if (!message || message.from === this.redis.nodeId) return;
      this.localCalls.cancel(message.scope, message.requestId, message.reason);
    });
    this.unsubscribeAnswers = await this.redis.subscribe(this.answerChannel, (text) => {
      const message = parseAnswer(text);
      if (!message || message.from === this.redis.nodeId) return;
      for (const handler of this.answerHandlers) handler(message.sessionId, message.response);
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribeAnswers?.();
  }

  /**
   * Publishes a client's answer for the node whose call asked (pending questions live on that
   * node). Only the session id travels with it: the receiving node settles a question only when it
   * was asked in that session, which the sending node checked belongs to the caller.
   */
  async relayAnswer(sessionId: string, response: ClientAnswer): Promise<boolean> {
    const message: AnswerMessage = { from: this.redis.nodeId, sessionId, response };
    return this.reachedOthers(
      await this.redis.publish(this.answerChannel, JSON.stringify(message)),
    );
  }

  onAnswer(handler: (sessionId: string, response: ClientAnswer) => void): () => void {
    this.answerHandlers.add(handler);
    return () => this.answerHandlers.delete(handler);
  }

  register(scope: string, requestId: RequestId, controller: AbortController): () => void {
    return this.localCalls.register(scope, requestId, controller);
  }

  /** True when the call ran here, or the cancel reached at least one other node (see reachedOthers). */
  async cancel(scope: string, requestId: RequestId, reason: string): Promise<boolean> {
    if (this.localCalls.cancel(scope, requestId, reason)) return true;
    const message: CancelMessage = { from: this.redis.nodeId, scope, requestId, reason };
    return this.reachedOthers(await this.redis.publish(this.channel, JSON.stringify(message)));
  }

  /**
   * Whether a publish reached another node. The publisher's own subscriber counts as a receiver.
   * On a Redis Cluster PUBLISH counts the subscribers of the node that took it only (the message
   * still goes to every node), so a publish that Redis took counts as reaching.
   */
  protected reachedOthers(receivers: number | false): boolean {
    if (receivers === false) return false;
    return this.redis.cluster || receivers > 1;
  }

  /** Calls registered on this node. */
  get localSize(): number {
    return this.localCalls.size;
  }
}

function parseAnswer(text: string): AnswerMessage | undefined {
  try {
    const value = JSON.parse(text) as Partial<AnswerMessage>;
    const response = value.response as Partial<ClientAnswer> | undefined;
    if (typeof value.sessionId !== 'string' || !response || typeof response !== 'object') {
      return undefined;
    }
    if (typeof response.id !== 'string' && typeof response.id !== 'number') return undefined;
    return value as AnswerMessage;
  } catch {
    return undefined;
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
