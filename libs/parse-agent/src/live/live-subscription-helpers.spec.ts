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
import { isPolicyRefusal, MAX_PLAN_RETRIES, planRetryDelay } from './live-subscription-helpers';

describe('live subscription plan failures', () => {
  it('drops a subscription only for a refusal by policy', () => {
    expect(isPolicyRefusal(new AccessDeniedError('no', { kind: 'hidden_class' }))).toBe(true);
    expect(isPolicyRefusal(new AgentValidationError('not in liveQuery.classNames'))).toBe(true);
    expect(isPolicyRefusal(new InvalidQueryError('bad where'))).toBe(true);
    // Parse slow, down or answering an error, a cancelled call, a lost connection: retried.
    expect(isPolicyRefusal(new McpMethodError(-32603, 'Parse Server answered 503'))).toBe(false);
    expect(isPolicyRefusal(new ParseRequestError('unavailable', 1, 503))).toBe(false);
    expect(isPolicyRefusal(new ToolTimeoutError('query_class', 30))).toBe(false);
    expect(isPolicyRefusal(new AgentCancelledError())).toBe(false);
    expect(isPolicyRefusal(new AgentUnauthorizedError())).toBe(false);
    expect(isPolicyRefusal(new TypeError('fetch failed'))).toBe(false);
    expect(isPolicyRefusal('a string')).toBe(false);
  });

  it('retries with a doubling delay, capped, a bounded number of times', () => {
    const delays = Array.from({ length: MAX_PLAN_RETRIES }, (_, i) => planRetryDelay(i + 1));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000]);
    expect(planRetryDelay(20)).toBe(30_000);
  });
});
