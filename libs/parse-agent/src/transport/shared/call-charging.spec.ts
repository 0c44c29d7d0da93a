import { RateLimitExceededError } from '../../core/errors';
import type { ParseAgent } from '../../agent/parse-agent';
import { chargeRequest } from './call-charging';

/** An agent as far as charging needs one: its consumeRateLimit(). */
function agentCharging(outcome: () => Promise<void>): { agent: ParseAgent; charged: () => number } {
  let charged = 0;
  const agent = {
    consumeRateLimit: () => {
      charged++;
      return outcome();
    },
  } as unknown as ParseAgent;
  return { agent, charged: () => charged };
}

describe('chargeRequest (the methods a transport charges, the same over HTTP and stdio)', () => {
  it('charges initialize, listings and prompts; not tool calls, resource reads or ping', async () => {
    const { agent, charged } = agentCharging(() => Promise.resolve());
    for (const method of ['initialize', 'tools/list', 'prompts/list', 'prompts/get']) {
      await expect(chargeRequest(agent, method)).resolves.toBeUndefined();
    }
    expect(charged()).toBe(4);
    // Charged by ParseAgent.execute() itself, or free: no promise at all, nothing charged.
    for (const method of [
      'tools/call',
      'resources/read',
      'ping',
      'notifications/initialized',
      42,
    ]) {
      expect(chargeRequest(agent, method)).toBeUndefined();
    }
    expect(charged()).toBe(4);
  });

  it('resolves to the refusal when over the limit, and rejects on any other failure', async () => {
    const refusal = new RateLimitExceededError(3, 60, 60);
    const over = agentCharging(() => Promise.reject(refusal));
    await expect(chargeRequest(over.agent, 'tools/list')).resolves.toBe(refusal);
    const broken = agentCharging(() => Promise.reject(new TypeError('limiter bug')));
    await expect(chargeRequest(broken.agent, 'tools/list')).rejects.toThrow('limiter bug');
  });
});
