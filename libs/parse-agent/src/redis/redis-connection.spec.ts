import { Cluster, Redis } from 'ioredis';
import { ParseAgentConfigError } from '../core/errors';
import { RedisConnection, validateRedisOptions } from './redis-connection';

describe('validateRedisOptions', () => {
  it('accepts a redis:// or rediss:// url with an optional key prefix', () => {
    expect(validateRedisOptions({ url: 'redis://127.0.0.1:6379' })).toEqual({
      url: 'redis://127.0.0.1:6379',
    });
    expect(() =>
      validateRedisOptions({ url: 'rediss://cache.example.com:6380/2', keyPrefix: 'app:' }),
    ).not.toThrow();
  });

  it('accepts cluster startup nodes as URLs or host and port', () => {
    expect(() =>
      validateRedisOptions({ cluster: ['redis://10.0.0.1:7000', 'redis://:pw@10.0.0.2:7000'] }),
    ).not.toThrow();
    expect(() =>
      validateRedisOptions({ cluster: [{ host: '10.0.0.1', port: 7000 }] }),
    ).not.toThrow();
  });

  it.each([
    [undefined, /must be an object/],
    ['redis://x', /must be an object/],
    [{}, /exactly one of url .*, cluster .* or client/],
    [{ url: 'redis://a', client: {} }, /exactly one of url/],
    [{ url: 'redis://a', cluster: ['redis://b:7000'] }, /exactly one of url/],
    [{ url: 'http://127.0.0.1:6379' }, /must start with redis:\/\/ or rediss:\/\//],
    [{ url: 'not a url' }, /is not a URL/],
    [{ client: { get: () => 1 } }, /must be an ioredis client/],
    [{ url: 'redis://a', keyPrefix: 'has space' }, /keyPrefix must be/],
    [{ cluster: [] }, /cluster must be a non-empty array of startup nodes/],
    [{ cluster: 'redis://a:7000' }, /cluster must be a non-empty array/],
    [{ cluster: ['http://a:7000'] }, /must be redis:\/\/host:port or rediss:\/\/host:port/],
    [{ cluster: ['nope'] }, /cluster node "nope" is not a URL/],
    [{ cluster: ['redis://a:7000/2'] }, /has only database 0, drop the \/db part/],
    [{ cluster: [{ host: 'a' }] }, /is not a startup node/],
    [{ cluster: [{ host: 'a', port: 70000 }] }, /is not a startup node/],
    [{ cluster: ['redis://a:7000', 'rediss://b:7000'] }, /mix redis:\/\/ and rediss:\/\//],
  ])('refuses %j with a fix-it message', (options, message) => {
    expect(() => validateRedisOptions(options)).toThrow(ParseAgentConfigError);
    expect(() => validateRedisOptions(options)).toThrow(message);
  });
});

describe('RedisConnection.slotKey', () => {
  it('keeps the single-server key shapes (no hash tag) and tags keys on a cluster', async () => {
    const single = new RedisConnection(new Redis({ lazyConnect: true }), 'p:', true);
    const cluster = new RedisConnection(
      new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true }),
      'p:',
      true,
    );
    try {
      expect(single.cluster).toBe(false);
      expect(single.slotKey('sessions', 'session', 'abc')).toBe('p:session:abc');
      expect(single.slotKey('s1', 'events', 's1')).toBe('p:events:s1');
      expect(cluster.cluster).toBe(true);
      expect(cluster.slotKey('sessions', 'session', 'abc')).toBe('p:{sessions}:session:abc');
      expect(cluster.slotKey('s1', 'events', 's1')).toBe('p:{s1}:events:s1');
    } finally {
      await single.close();
      await cluster.close();
    }
  });
});
