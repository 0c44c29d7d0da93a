import {
  AccessDeniedError,
  AgentUnauthorizedError,
  ParseAgentConfigError,
  RateLimitExceededError,
} from '../core/errors';
import { AgentHookSet, runAfterHooks, runBeforeHooks, type ToolCallInfo } from './agent-hooks';

const call: ToolCallInfo = {
  tool: 'query_class',
  args: { class_name: 'Order' },
  agentId: 'a1',
  agentDepth: 0,
  authType: 'session_token',
};

describe('AgentHookSet', () => {
  let warnings: string[];
  const warn = (m: string) => warnings.push(m);
  beforeEach(() => (warnings = []));

  it('lets a call through when every before-hook returns nothing or allow: true', async () => {
    const set = new AgentHookSet();
    set.addAll({ beforeToolCall: [() => undefined, () => ({ allow: true })] });
    await expect(set.before(call, warn)).resolves.toBeUndefined();
  });

  it('refuses with access_denied (hook_refused) and the reason a hook gave', async () => {
    const set = new AgentHookSet();
    const later = jest.fn();
    set.addAll({
      beforeToolCall: [async () => ({ allow: false, reason: 'outside business hours' }), later],
    });
    const refusal = await set.before(call, warn);
    expect(refusal).toBeInstanceOf(AccessDeniedError);
    expect(refusal?.message).toBe(
      "Tool 'query_class' was refused by this agent's beforeToolCall hook: outside business hours",
    );
    expect((refusal as AccessDeniedError).kind).toBe('hook_refused');
    // The first refusal decides: later hooks do not run.
    expect(later).not.toHaveBeenCalled();
  });

  it('reads a bare false as a refusal, never as consent', async () => {
    const set = new AgentHookSet();
    set.addAll({ beforeToolCall: (() => false) as never });
    const refusal = await set.before(call, warn);
    expect(refusal?.message).toBe(
      "Tool 'query_class' was refused by this agent's beforeToolCall hook.",
    );
  });

  it('refuses a call whose hook throws (fail closed), without echoing its message', async () => {
    const set = new AgentHookSet();
    set.addAll({
      beforeToolCall: () => {
        throw new Error('connect ECONNREFUSED 10.0.0.5:6379');
      },
    });
    const refusal = await set.before(call, warn);
    expect(refusal?.message).toContain('the hook failed');
    expect(refusal?.message).not.toContain('ECONNREFUSED');
    expect(warnings.join('\n')).toContain('ECONNREFUSED');
  });

  it("answers with a hook's own library error, and lets AgentUnauthorizedError end the request", async () => {
    const limited = new AgentHookSet();
    limited.addAll({
      beforeToolCall: () => {
        throw new RateLimitExceededError(5, 10, 60);
      },
    });
    await expect(limited.before(call, warn)).resolves.toBeInstanceOf(RateLimitExceededError);
    const unauthorized = new AgentHookSet();
    unauthorized.addAll({
      beforeToolCall: () => {
        throw new AgentUnauthorizedError('Unauthorized');
      },
    });
    await expect(unauthorized.before(call, warn)).rejects.toBeInstanceOf(AgentUnauthorizedError);
  });

  it('runs observing hooks even when one of them throws or rejects, and logs the failure', async () => {
    const set = new AgentHookSet();
    const seen: string[] = [];
    set.addAll({
      afterToolCall: [
        () => {
          throw new Error('boom');
        },
        async () => {
          seen.push('second');
          throw new Error('late boom');
        },
        (c, outcome) => seen.push(`${c.tool}:${outcome.envelope.success}`),
      ],
    });
    set.after(call, { envelope: { success: true, data: {} }, durationMs: 1 }, warn);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['second', 'query_class:true']);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('afterToolCall hook failed (ignored)');
  });

  it('checks the whole hooks object before adding any, and says how to fix it', () => {
    const set = new AgentHookSet();
    const fine = jest.fn();
    expect(() => set.addAll({ afterToolCall: fine, beforeToolCall: 'nope' as never })).toThrow(
      ParseAgentConfigError,
    );
    expect(() => set.addAll({ beforeCall: fine } as never)).toThrow(
      /hooks.beforeCall is not a hook; use beforeToolCall, afterToolCall, onError or onLlmResponse/,
    );
    expect(set.has('afterToolCall')).toBe(false);
  });

  it('removes the hooks it added', async () => {
    const set = new AgentHookSet();
    const remove = set.addAll({ beforeToolCall: () => ({ allow: false }) });
    expect(await set.before(call, warn)).toBeDefined();
    remove();
    expect(set.has('beforeToolCall')).toBe(false);
    expect(await set.before(call, warn)).toBeUndefined();
  });
});

describe('hook chains (an agent and its ancestors)', () => {
  it('stops at the first refusal along the chain', async () => {
    const own = new AgentHookSet();
    const parent = new AgentHookSet();
    const parentHook = jest.fn(() => ({ allow: false, reason: 'parent says no' }));
    own.addAll({ beforeToolCall: () => undefined });
    parent.addAll({ beforeToolCall: parentHook });
    const refusal = await runBeforeHooks([own, parent], call, () => undefined);
    expect(refusal?.message).toContain('parent says no');
    expect(parentHook).toHaveBeenCalledWith(call);
  });

  it('calls onError only for failed calls, with the tool as context', () => {
    const set = new AgentHookSet();
    const onError = jest.fn();
    const after = jest.fn();
    set.addAll({ onError, afterToolCall: after });
    const ok = { envelope: { success: true as const, data: 1 }, durationMs: 2 };
    runAfterHooks([set], call, ok, undefined, () => undefined);
    expect(onError).not.toHaveBeenCalled();
    const failed = {
      envelope: { success: false as const, error: 'x', error_code: 'timeout' },
      durationMs: 2,
    };
    const error = new Error('took too long');
    runAfterHooks([set], call, failed, error, () => undefined);
    expect(after).toHaveBeenCalledTimes(2);
    expect(onError).toHaveBeenCalledWith(error, { source: 'tool', ...call });
  });
});
