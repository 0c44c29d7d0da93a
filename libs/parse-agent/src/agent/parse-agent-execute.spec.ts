import 'reflect-metadata';
import { inMemoryAgentServices } from '../../../../test/fixtures/in-memory-agent';
import type { ToolCallEvent } from '../core/agent-events';
import { suppressSecurityBanners } from '../core/security-banner';
import type { PolicedToolContext } from '../tools/custom-tool';
import { ParseAgent, type AgentServices } from './parse-agent';

/**
 * The execute pipeline around a tool, without a server: time limits and cancellation settle the
 * call even when the tool ignores its signal, and every call is reported once.
 */
function servicesWith(
  handler: (args: Record<string, unknown>, context: PolicedToolContext) => unknown,
  timeout?: number,
): AgentServices & { warnings: string[] } {
  const { services } = inMemoryAgentServices({ schemas: {} });
  const warnings: string[] = [];
  services.tools.register({
    name: 'probe',
    description: 'A tool under test.',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    timeout,
    handler: (args, context) => handler(args, context),
  });
  return Object.assign(services, { warn: (m: string) => warnings.push(m), warnings });
}

/** A promise the test settles by hand, standing for a tool that ignores its signal. */
function stuck<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** An agent whose probe tool only counts its runs. */
function countingAgent() {
  let count = 0;
  const agent = new ParseAgent(
    {},
    servicesWith(() => {
      count++;
      return {};
    }),
  );
  return { agent, runs: () => count };
}

beforeAll(() => suppressSecurityBanners());

describe('ParseAgent.execute around a tool', () => {
  it('answers with the tool result as a success envelope, and reports the call once', async () => {
    const services = servicesWith((args) => ({ doubled: (args.n as number) * 2 }));
    const events: ToolCallEvent[] = [];
    services.events.toolCalls$.subscribe((e) => events.push(e));
    const agent = new ParseAgent({}, services);
    await expect(agent.execute('probe', { n: 21 })).resolves.toEqual({
      success: true,
      data: { doubled: 42 },
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ tool: 'probe', success: true, args_keys: ['n'] });
  });

  it('times out a tool that ignores its signal, and a late answer changes nothing', async () => {
    const late = stuck<unknown>();
    let seen: AbortSignal | undefined;
    const services = servicesWith((_, context) => {
      seen = context.signal;
      return late.promise;
    }, 1);
    const agent = new ParseAgent({}, services);
    const envelope = await agent.execute('probe', {});
    expect(envelope).toMatchObject({ success: false, error_code: 'timeout' });
    expect(seen?.aborted).toBe(true);
    late.resolve({ leaked: true });
    late.reject(new Error('ignored'));
    await new Promise((r) => setImmediate(r));
    expect(JSON.stringify(envelope)).not.toContain('leaked');
  });

  it("a caller's signal cancels its own call only; the agent keeps serving others", async () => {
    const first = stuck<unknown>();
    const services = servicesWith((args) => (args.n === 1 ? first.promise : { ok: args.n }));
    const agent = new ParseAgent({}, services);
    const controller = new AbortController();
    const pending = agent.execute('probe', { n: 1 }, { signal: controller.signal });
    await new Promise((r) => setImmediate(r));
    controller.abort();
    await expect(pending).resolves.toMatchObject({ success: false, error_code: 'cancelled' });
    await expect(agent.execute('probe', { n: 2 })).resolves.toEqual({
      success: true,
      data: { ok: 2 },
    });
    expect(agent.cancelled).toBe(false);
    // The abandoned tool failing later is absorbed (jest would report an unhandled rejection).
    first.reject(new Error('after the fact'));
    await new Promise((r) => setImmediate(r));
  });

  it('cancel() settles the call in flight and refuses later ones without running the tool', async () => {
    const inFlight = stuck<unknown>();
    let runs = 0;
    const services = servicesWith(() => {
      runs++;
      return inFlight.promise;
    });
    const agent = new ParseAgent({}, services);
    const pending = agent.execute('probe', {});
    await new Promise((r) => setImmediate(r));
    agent.cancel('operator stop');
    await expect(pending).resolves.toMatchObject({ success: false, error_code: 'cancelled' });
    await expect(agent.execute('probe', {})).resolves.toMatchObject({ error_code: 'cancelled' });
    expect(runs).toBe(1);
  });

  it('does not run a call whose signal is already aborted', async () => {
    const { agent, runs } = countingAgent();
    const controller = new AbortController();
    controller.abort();
    await expect(agent.execute('probe', {}, { signal: controller.signal })).resolves.toMatchObject({
      error_code: 'cancelled',
    });
    expect(runs()).toBe(0);
  });

  it('turns an unexpected error into a failure envelope and warns the operator with its stack', async () => {
    const services = servicesWith(() => {
      throw new TypeError('x is not a function');
    });
    const agent = new ParseAgent({}, services);
    const envelope = await agent.execute('probe', {});
    expect(envelope.success).toBe(false);
    expect(services.warnings).toHaveLength(1);
    expect(services.warnings[0]).toContain('probe failed: TypeError: x is not a function');
  });

  it('refuses arguments that are not an object, and those the schema rejects, before running', async () => {
    const { agent, runs } = countingAgent();
    for (const args of [[1, 2], { n: 'two' }]) {
      await expect(
        agent.execute('probe', args as unknown as Record<string, unknown>),
      ).resolves.toMatchObject({ success: false, error_code: 'invalid_argument' });
    }
    expect(runs()).toBe(0);
  });
});
