import { ParseAgentConfigError } from '../core/errors';
import { validateRedisOptions } from './redis-connection';

describe('validateRedisOptions', () => {
  it('accepts a redis:// or rediss:// url with an optional key prefix', () => {
    expect(validateRedisOptions({ url: 'redis://127.0.0.1:6379' })).toEqual({
      url: 'redis://127.0.0.1:6379',
    });
    expect(() =>
      validateRedisOptions({ url: 'rediss://cache.example.com:6380/2', keyPrefix: 'app:' }),
    ).not.toThrow();
  });

  it.each([
    [undefined, /must be an object/],
    ['redis://x', /must be an object/],
    [{}, /exactly one of url .* or client/],
    [{ url: 'redis://a', client: {} }, /exactly one of url/],
    [{ url: 'http://127.0.0.1:6379' }, /must start with redis:\/\/ or rediss:\/\//],
    [{ url: 'not a url' }, /is not a URL/],
    [{ client: { get: () => 1 } }, /must be an ioredis client/],
    [{ url: 'redis://a', keyPrefix: 'has space' }, /keyPrefix must be/],
  ])('refuses %j with a fix-it message', (options, message) => {
    expect(() => validateRedisOptions(options)).toThrow(ParseAgentConfigError);
    expect(() => validateRedisOptions(options)).toThrow(message);
  });
});
