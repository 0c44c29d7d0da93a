import { RateLimitExceededError } from '../../core/errors';
import type { ParseAgent } from '../../agent/parse-agent';

/**
 * Methods that do work without running a tool, charged to the caller's rate limit by the
 * transport; `tools/call` and `resources/*` are charged by `ParseAgent.execute()` itself.
 */
const CHARGED_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'prompts/list',
  'prompts/get',
]);

/**
 * Charges one request to the agent's rate limit when its method is charged here. Undefined (no
 * promise, no await) for a method that is not; else resolves to the refusal, or undefined once
 * charged. Any other failure of the limiter rejects.
 */
export function chargeRequest(
  agent: ParseAgent,
  method: unknown,
): Promise<RateLimitExceededError | undefined> | undefined {
  if (typeof method !== 'string' || !CHARGED_METHODS.has(method)) return undefined;
  return agent.consumeRateLimit().then(
    () => undefined,
    (error: unknown) => {
      if (error instanceof RateLimitExceededError) return error;
      throw error;
    },
  );
}
