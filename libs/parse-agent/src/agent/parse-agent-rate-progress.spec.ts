import 'reflect-metadata';
import { inMemoryAgentServices } from '../../../../test/fixtures/in-memory-agent';
import type { ProgressUpdate } from '../tools/tool-context';
import { ParseAgentConfigError } from '../core/errors';
import { suppressSecurityBanners } from '../core/security-banner';
import { KeyedSlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import type { RateLimiter } from '../ports/rate-limiter';
import { ParseAgent, type AgentOptions, type AgentServices } from './parse-agent';

/** Services with a `probe` tool that reports progress (when asked) and counts its runs. */
function probeServices(shared?: RateLimiter): AgentServices & { runs: () => number } {
  const { services } = inMemoryAgentServices({ schemas: {} });
  let runs = 0;
  services.tools.register({
    name: 'probe',
    description: 'A tool under test.',
    inputSchema: { type: 'object', properties: { step: { type: 'number' } } },
    handler: (args, context) => {
      runs++;
      if (typeof args.step === 'number') {
        context.reportProgress({ progress: args.step, total: 10, message: 'probing' });
      }
      return {};
    },
  });
  return Object.assign(services, { rateLimiter: shared, runs: () => runs });
}

const errorOf = (envelope: unknown) => (envelope as { error_code?: string }).error_code;

beforeAll(() => suppressSecurityBanners());

describe('per-agent rateLimit / rateWindow', () => {
  it('refuses the call past the agent’s own limit, without running the tool', async () => {
    const services = probeServices();
    const agent = new ParseAgent({ rateLimit: 2, rateWindow: 60 }, services);
    expect(errorOf(await agent.execute('probe'))).toBeUndefined();
    expect(errorOf(await agent.execute('probe'))).toBeUndefined();
    const third = await agent.execute('probe');
    expect(third).toMatchObject({ success: false, error_code: 'rate_limited' });
    expect(services.runs()).toBe(2);
  });

  it('keeps charging the shared limiter as well: the own window never lifts it', async () => {
    const services = probeServices(new KeyedSlidingWindowRateLimiter(1, 60));
    const agent = new ParseAgent({ rateLimit: 50 }, services);
    await agent.execute('probe');
    expect(errorOf(await agent.execute('probe'))).toBe('rate_limited');
    expect(services.runs()).toBe(1);
  });

  it('charges a sub-agent’s calls to its parent’s window too', async () => {
    const services = probeServices();
    const parent = new ParseAgent({ rateLimit: 2 }, services);
    const child = parent.subAgent({ rateLimit: 2 });
    await parent.execute('probe');
    await child.execute('probe');
    expect(errorOf(await child.execute('probe'))).toBe('rate_limited');
    expect(errorOf(await parent.execute('probe'))).toBe('rate_limited');
    expect(services.runs()).toBe(2);
  });

  it('refuses a sub-agent rateLimit above its parent’s budget', () => {
    const services = probeServices();
    const parent = new ParseAgent({ rateLimit: 5 }, services);
    expect(() => parent.subAgent({ rateLimit: 6 })).toThrow(ParseAgentConfigError);
    expect(() => parent.subAgent({ rateLimit: 6 })).toThrow(
      /cannot exceed its parent's budget \(5/,
    );
    expect(() => parent.subAgent({ rateLimit: 5 })).not.toThrow();
    // The shared limiter's declared limit is a budget too.
    const shared = new ParseAgent({}, probeServices(new KeyedSlidingWindowRateLimiter(3, 60)));
    expect(() => shared.subAgent({ rateLimit: 4 })).toThrow(/budget \(3/);
  });

  it.each<[string, AgentOptions]>([
    ['rateLimit 0', { rateLimit: 0 }],
    ['rateLimit 1.5', { rateLimit: 1.5 }],
    ['rateLimit "10"', { rateLimit: '10' as unknown as number }],
    ['rateWindow -1', { rateWindow: -1 }],
    ['rateWindow NaN', { rateWindow: Number.NaN }],
  ])('refuses %s with a message naming the option', (_, options) => {
    const name = Object.keys(options)[0];
    expect(() => new ParseAgent(options, probeServices())).toThrow(
      new RegExp(`^${name} must be a positive`),
    );
  });

  it.each<[string, unknown]>([
    ['a string', 'redis'],
    ['an object without check', { limit: 10 }],
    ['check that is not a function', { check: true }],
  ])('refuses a rateLimiter that is %s', (_, rateLimiter) => {
    expect(
      () => new ParseAgent({ rateLimiter: rateLimiter as RateLimiter }, probeServices()),
    ).toThrow(/^rateLimiter must implement the RateLimiter port/);
  });

  it('accepts any object with a check method as rateLimiter', async () => {
    const keys: (string | undefined)[] = [];
    const agent = new ParseAgent(
      { rateLimiter: { check: (key) => void keys.push(key) } },
      probeServices(),
    );
    await agent.execute('probe');
    expect(keys).toHaveLength(1);
  });
});

describe('sub-agent progress', () => {
  it('reaches the parent’s progress stream and the parent call’s onProgress', async () => {
    const services = probeServices();
    const parent = new ParseAgent({}, services);
    const child = parent.subAgent();
    const grandchild = child.subAgent();
    const onParent: ProgressUpdate[] = [];
    const onChild: ProgressUpdate[] = [];
    parent.progress$.subscribe((u) => onParent.push(u));
    child.progress$.subscribe((u) => onChild.push(u));
    // A tool on the parent that delegates to the grandchild: the parent call's onProgress (the
    // MCP notification sink) sees the delegated progress.
    const forwarded: ProgressUpdate[] = [];
    services.tools.register({
      name: 'delegate',
      description: 'Delegates to a sub-agent.',
      inputSchema: { type: 'object', properties: {} },
      handler: async () => grandchild.execute('probe', { step: 4 }),
    });
    await parent.execute('delegate', {}, { onProgress: (u) => forwarded.push(u) });
    const update = { progress: 4, total: 10, message: 'probing' };
    expect(onChild).toEqual([update]);
    expect(onParent).toEqual([update]);
    expect(forwarded).toEqual([update]);
  });

  it('does not flow downwards: a parent’s progress stays out of its sub-agents’ streams', async () => {
    const parent = new ParseAgent({}, probeServices());
    const child = parent.subAgent();
    const onChild: ProgressUpdate[] = [];
    child.progress$.subscribe((u) => onChild.push(u));
    await parent.execute('probe', { step: 1 });
    expect(onChild).toEqual([]);
  });
});
