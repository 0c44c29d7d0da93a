import type {
  SharedSubscriptionAdd,
  SharedSubscriptionRecords,
} from '../mcp/resource-subscriptions.types';
import type { RedisConnection } from './redis-connection';
import { RedisScript } from './redis-script';

/** Hash tag of the session keys on a Redis Cluster (the session store's). */
export const SESSIONS_SLOT = 'sessions';

/** The set of URIs a session subscribes to, beside the session's hash (same slot). */
export function liveSubscriptionsKey(redis: RedisConnection, sessionId: string): string {
  return redis.slotKey(SESSIONS_SLOT, 'live-subscriptions', sessionId);
}

/**
 * Records one URI for a live session unless its set is full, with the session's remaining time to
 * live (the session store refreshes both on use and deletes both with the session). KEYS: session
 * hash, the session's set. ARGV: uri, cap. Returns 'added', 'exists', 'full' or 'gone'.
 */
const ADD = new RedisScript(`
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 'gone' end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 'exists' end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 'full' end
redis.call('SADD', KEYS[2], ARGV[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 'added'
`);

interface ChangedMessage {
  from: string;
  session: string;
}

/**
 * Resource subscriptions as session state in Redis: each session's subscribed URIs are a set next
 * to the session (same expiry, deleted with it), so whichever node holds the session's listening
 * stream, now or after another node died, finds them; a change is published on one channel and the
 * node holding the stream starts or stops the LiveQuery subscriptions.
 */
export class RedisLiveSubscriptions implements SharedSubscriptionRecords {
  protected readonly channel: string;

  constructor(protected readonly redis: RedisConnection) {
    this.channel = redis.key('live-subscriptions', 'changed');
  }

  async add(sessionId: string, uri: string, cap: number): Promise<SharedSubscriptionAdd> {
    const reply = await ADD.run(
      this.redis.client,
      [this.sessionKey(sessionId), liveSubscriptionsKey(this.redis, sessionId)],
      [uri, cap],
    );
    return reply as SharedSubscriptionAdd;
  }

  async remove(sessionId: string, uri: string): Promise<boolean> {
    return (await this.redis.client.srem(liveSubscriptionsKey(this.redis, sessionId), uri)) === 1;
  }

  async list(sessionId: string): Promise<string[]> {
    return this.redis.client.smembers(liveSubscriptionsKey(this.redis, sessionId));
  }

  async announce(sessionId: string): Promise<boolean> {
    const message: ChangedMessage = { from: this.redis.nodeId, session: sessionId };
    return (await this.redis.publish(this.channel, JSON.stringify(message))) !== false;
  }

  async watch(changed: (sessionId: string) => void): Promise<() => void> {
    return this.redis.subscribe(this.channel, (text) => {
      let message: Partial<ChangedMessage>;
      try {
        message = JSON.parse(text) as Partial<ChangedMessage>;
      } catch {
        return;
      }
      if (message?.from === this.redis.nodeId || typeof message?.session !== 'string') return;
      changed(message.session);
    });
  }

  /** The session store's hash of the session (see RedisSessionStore.sessionKey). */
  protected sessionKey(sessionId: string): string {
    return this.redis.slotKey(SESSIONS_SLOT, 'session', sessionId);
  }
}
