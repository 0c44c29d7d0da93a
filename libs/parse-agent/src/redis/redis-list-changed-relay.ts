import { merge, Subject, type Observable, type Subscription } from 'rxjs';
import type { RedisConnection } from './redis-connection';

/** Which list changed. */
export type ListKind = 'tools' | 'prompts';

interface ListChangedMessage {
  from: string;
  kind: ListKind;
  change: unknown;
}

/**
 * Spreads tool and prompt list changes between nodes: local changes are published, changes published
 * by other nodes are re-emitted here, so open streams on every node hear `list_changed`. A change
 * only announces; each node serves its own registry, so register tools on every node.
 */
export class RedisListChangedRelay {
  protected readonly remote = { tools: new Subject<unknown>(), prompts: new Subject<unknown>() };
  protected readonly channel: string;
  protected readonly published: Subscription[] = [];
  protected unsubscribe?: () => void;

  constructor(protected readonly redis: RedisConnection) {
    this.channel = redis.key('list-changed');
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.redis.subscribe(this.channel, (text) => {
      let message: ListChangedMessage;
      try {
        message = JSON.parse(text) as ListChangedMessage;
      } catch {
        return;
      }
      if (message.from === this.redis.nodeId) return;
      if (message.kind === 'tools' || message.kind === 'prompts') {
        this.remote[message.kind].next(message.change);
      }
    });
  }

  /** Publishes `local$` changes and returns local plus remote changes of that list. */
  relay(kind: ListKind, local$: Observable<unknown>): Observable<unknown> {
    this.published.push(
      local$.subscribe((change) => {
        const message: ListChangedMessage = { from: this.redis.nodeId, kind, change };
        void this.redis.publish(this.channel, JSON.stringify(message));
      }),
    );
    return merge(local$, this.remote[kind].asObservable());
  }

  stop(): void {
    this.unsubscribe?.();
    for (const subscription of this.published.splice(0)) subscription.unsubscribe();
    this.remote.tools.complete();
    this.remote.prompts.complete();
  }
}
