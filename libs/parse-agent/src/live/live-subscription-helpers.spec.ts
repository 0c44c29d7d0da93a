import {
  AccessDeniedError,
  AgentCancelledError,
  AgentUnauthorizedError,
  AgentValidationError,
  InvalidQueryError,
  ParseRequestError,
  ToolTimeoutError,
} from '../core/errors';
import { McpMethodError } from '../mcp/mcp-method-error';
import { isPolicyRefusal, RESYNC_SLICES, resyncSliceOf } from './live-subscription-helpers';
import { PLAN_RETRY_DELAYS_MS, PlanRetries } from './plan-retries';

describe('live subscription plan failures', () => {
  it('drops a subscription only for a refusal by policy', () => {
    expect(isPolicyRefusal(new AccessDeniedError('no', { kind: 'hidden_class' }))).toBe(true);
    expect(isPolicyRefusal(new AgentValidationError('not in liveQuery.classNames'))).toBe(true);
    expect(isPolicyRefusal(new InvalidQueryError('bad where'))).toBe(true);
    // The identity is gone (a revoked or expired session token): retrying cannot bring it back.
    expect(
      isPolicyRefusal(
        new AgentUnauthorizedError('The session token is invalid or expired.', {
          reason: 'invalid_session',
        }),
      ),
    ).toBe(true);
    // Parse slow, down or answering an error, a cancelled call, a lost connection: retried.
    expect(isPolicyRefusal(new McpMethodError(-32603, 'Parse Server answered 503'))).toBe(false);
    expect(isPolicyRefusal(new ParseRequestError('unavailable', 1, 503))).toBe(false);
    expect(isPolicyRefusal(new ToolTimeoutError('query_class', 30))).toBe(false);
    expect(isPolicyRefusal(new AgentCancelledError())).toBe(false);
    expect(isPolicyRefusal(new TypeError('fetch failed'))).toBe(false);
    expect(isPolicyRefusal('a string')).toBe(false);
  });

  it('retries with a doubling delay up to 30 s, then every 30 s until stopped', () => {
    jest.useFakeTimers();
    try {
      const retries = new PlanRetries();
      let tries = 0;
      const steps: Array<{ delay?: number; rampOver: boolean }> = [];
      const fail = () => {
        tries += 1;
        const { delay, rampOver } = retries.failed('parse://Order/count', fail);
        steps.push({ delay, rampOver });
      };
      fail();
      jest.advanceTimersByTime(1000 + 2000 + 4000 + 8000 + 16_000 + 30_000 + 30_000 * 3);
      expect(steps.map((s) => s.delay)).toEqual([
        ...PLAN_RETRY_DELAYS_MS,
        30_000,
        30_000,
        30_000,
        30_000,
      ]);
      // The doubling ends once, on the failure after the last ramp wait; the caller tells the client.
      expect(steps.map((s) => s.rampOver)).toEqual([
        false,
        false,
        false,
        false,
        false,
        false,
        true,
        false,
        false,
        false,
      ]);
      expect(retries.stop('parse://Order/count')).toBe(true);
      jest.advanceTimersByTime(120_000);
      expect(tries).toBe(10);
      expect(retries.has('parse://Order/count')).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it('spreads the periodic re-read: each session in one stable slice, the slices evenly filled', () => {
    const counts = new Array<number>(RESYNC_SLICES).fill(0);
    for (let i = 0; i < 8000; i++) {
      const id = `${i.toString(36)}-${(i * 7919).toString(16)}-session`;
      const slice = resyncSliceOf(id);
      expect(resyncSliceOf(id)).toBe(slice);
      expect(Number.isInteger(slice) && slice >= 0 && slice < RESYNC_SLICES).toBe(true);
      counts[slice] += 1;
    }
    for (const n of counts) expect(Math.abs(n - 1000)).toBeLessThan(200);
  });
});
