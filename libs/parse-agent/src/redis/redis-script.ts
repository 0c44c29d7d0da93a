import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection';

/**
 * A Lua script run by its SHA1 (EVALSHA), loaded with EVAL the first time a server has not seen it
 * (after a restart or on a new node). Runs atomically on the server.
 */
export class RedisScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: RedisClient, keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
