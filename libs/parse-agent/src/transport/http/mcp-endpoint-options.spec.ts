import { DEFAULT_MAX_CONCURRENT_STREAMS, resolveMcpEndpointOptions } from './mcp-endpoint-options';

describe('resolveMcpEndpointOptions: maxConcurrentStreams', () => {
  it('is finite by default (1 000), so streaming is never unbounded', () => {
    expect(DEFAULT_MAX_CONCURRENT_STREAMS).toBe(1_000);
    expect(resolveMcpEndpointOptions({}).maxConcurrentStreams).toBe(1_000);
    expect(resolveMcpEndpointOptions({ streaming: true }).maxConcurrentStreams).toBe(1_000);
  });

  it('takes a positive cap (rounded down) and refuses anything else, naming the setting', () => {
    expect(resolveMcpEndpointOptions({ maxConcurrentStreams: 20.7 }).maxConcurrentStreams).toBe(20);
    for (const bad of [0, -1, Number.POSITIVE_INFINITY, '10']) {
      expect(() => resolveMcpEndpointOptions({ maxConcurrentStreams: bad as number })).toThrow(
        /maxConcurrentStreams must be a positive number/,
      );
    }
  });
});
