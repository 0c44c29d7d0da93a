import 'reflect-metadata';
import { inMemoryAgentServices } from '../../../../test/fixtures/in-memory-agent';
import type { SecurityEvent, ToolCallEvent } from '../core/agent-events';
import { resetSecurityBanners, suppressSecurityBanners } from '../core/security-banner';
import { ParseAgent, type AgentServices } from './parse-agent';

/**
 * Hooks, security events, the operation log, the master-key audit line and tool-call telemetry
 * around ParseAgent.execute, without a server (the integration suite repeats the essentials
 * against a real Parse Server).
 */
function services(): AgentServices & { runs: string[]; warnings: string[] } {
  const { services } = inMemoryAgentServices({ schemas: {} });
  const runs: string[] = [];
  const warnings: string[] = [];
  services.tools.register({
    name: 'probe',
    description: 'Counts its runs.',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    handler: (args) => {
      runs.push('probe');
      return { n: args.n ?? 0, padding: 'x'.repeat(396) };
    },
  });
  services.tools.register({
    name: 'breaks',
    description: 'Fails unexpectedly.',
    handler: () => {
      runs.push('breaks');
      throw new TypeError('cannot read properties of undefined');
    },
  });
  services.tools.register({
    name: 'write_probe',
    description: 'A write-tier tool.',
    permission: 'write',
    handler: () => {
      runs.push('write_probe');
      return {};
    },
  });
  return Object.assign(services, { runs, warnings, warn: (m: string) => warnings.push(m) });
}

let lines: string[];
beforeEach(() => {
  lines = [];
  resetSecurityBanners((line) => lines.push(line));
  suppressSecurityBanners();
});
afterAll(() => resetSecurityBanners(() => undefined));

describe('hooks around execute', () => {
  it('a refusing before-hook means the tool never runs, and after-hooks do not fire', async () => {
    const s = services();
    const after = jest.fn();
    const agent = new ParseAgent(
      {
        hooks: {
          beforeToolCall: (call) =>
            call.args.n === 13 ? { allow: false, reason: 'unlucky number' } : undefined,
          afterToolCall: after,
        },
      },
      s,
    );
    const refused = await agent.execute('probe', { n: 13 });
    expect(refused).toEqual({
      success: false,
      error: "Tool 'probe' was refused by this agent's beforeToolCall hook: unlucky number",
      error_code: 'access_denied',
      details: { kind: 'hook_refused' },
    });
    expect(s.runs).toEqual([]);
    expect(after).not.toHaveBeenCalled();

    await expect(agent.execute('probe', { n: 1 })).resolves.toMatchObject({ success: true });
    expect(s.runs).toEqual(['probe']);
    expect(after).toHaveBeenCalledTimes(1);
    expect(after.mock.calls[0][0]).toMatchObject({ tool: 'probe', args: { n: 1 }, agentDepth: 0 });
    expect(after.mock.calls[0][1].envelope).toMatchObject({ success: true, data: { n: 1 } });
  });

  it('before-hooks do not run for calls a gate refused, nor onError for successes', async () => {
    const s = services();
    const before = jest.fn();
    const onError = jest.fn();
    const agent = new ParseAgent({ hooks: { beforeToolCall: before, onError } }, s);
    await agent.execute('write_probe');
    expect(before).not.toHaveBeenCalled();
    await agent.execute('probe');
    expect(before).toHaveBeenCalledTimes(1);
    expect(onError).not.toHaveBeenCalled();
    await agent.execute('breaks');
    expect(onError).toHaveBeenCalledTimes(1);
    const [error, context] = onError.mock.calls[0];
    expect(error).toBeInstanceOf(TypeError);
    expect(context).toMatchObject({ source: 'tool', tool: 'breaks' });
  });

  it("a sub-agent's calls run its ancestors' hooks too, so it cannot slip past a refusal", async () => {
    const s = services();
    const parent = new ParseAgent({}, s);
    const seen: Array<[string, number]> = [];
    parent.addHooks({
      beforeToolCall: (call) => {
        seen.push([call.tool, call.agentDepth]);
        return { allow: false, reason: 'parent policy' };
      },
    });
    const child = parent.subAgent();
    const envelope = await child.execute('probe');
    expect(envelope).toMatchObject({ success: false, details: { kind: 'hook_refused' } });
    expect(seen).toEqual([['probe', 1]]);
    expect(s.runs).toEqual([]);
  });

  it('addHooks returns a remover', async () => {
    const s = services();
    const agent = new ParseAgent({}, s);
    const remove = agent.addHooks({ beforeToolCall: () => ({ allow: false }) });
    expect((await agent.execute('probe')).success).toBe(false);
    remove();
    expect((await agent.execute('probe')).success).toBe(true);
  });

  it('refuses a bad hooks option at construction', () => {
    expect(() => new ParseAgent({ hooks: { beforeToolCall: 42 as never } }, services())).toThrow(
      /hooks.beforeToolCall must be a function/,
    );
  });
});

describe('security events and the master-key audit line', () => {
  it('emits one denied event and one log line per refused call, none for allowed calls', async () => {
    const s = services();
    const events: SecurityEvent[] = [];
    s.events.securityEvents$.subscribe((e) => events.push(e));
    const agent = new ParseAgent({ masterKeyAudit: false }, s);
    await agent.execute('probe');
    expect(events).toEqual([]);
    await agent.execute('write_probe', { n: 1 });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'denied',
      tool: 'write_probe',
      error_code: 'permission_denied',
      error_class: 'PermissionDeniedError',
      args_keys: ['n'],
      auth_type: 'master_key',
    });
    expect(lines).toEqual([
      expect.stringMatching(/^SECURITY denied write_probe: permission_denied agent=/),
    ]);
  });

  it('writes one audit line per master-key call unless masterKeyAudit is false', async () => {
    const s = services();
    const audited = new ParseAgent({}, s);
    await audited.execute('probe', { n: 2 });
    await audited.execute('breaks');
    expect(lines).toEqual([
      expect.stringMatching(/^AUDIT master-key call probe args=\[n\] ok \d+ms agent=/),
      expect.stringMatching(/^AUDIT master-key call breaks args=\[\] failed=internal_error/),
    ]);
    lines.length = 0;
    await new ParseAgent({ masterKeyAudit: false }, s).execute('probe');
    expect(lines).toEqual([]);
  });
});

describe('the operation log', () => {
  it('keeps the last maxLogSize operations, refused ones included, never argument values', async () => {
    const s = services();
    const agent = new ParseAgent({ maxLogSize: 3, masterKeyAudit: false }, s);
    for (let n = 0; n < 5; n++) await agent.execute('probe', { n });
    await agent.execute('write_probe');
    const log = agent.operationLog;
    expect(log).toHaveLength(3);
    expect(log.map((e) => [e.tool, e.success])).toEqual([
      ['probe', true],
      ['probe', true],
      ['write_probe', false],
    ]);
    expect(log[2]).toMatchObject({ error_code: 'permission_denied' });
    expect(JSON.stringify(log)).not.toContain('"n":');
  });
});

describe('tool-call telemetry', () => {
  it('prices successful results and names the error class of failures', async () => {
    const s = services();
    const events: ToolCallEvent[] = [];
    s.events.toolCalls$.subscribe((e) => events.push(e));
    const priced = new ParseAgent({ inputTokenCostPerMillion: 3, masterKeyAudit: false }, s);
    await priced.execute('probe');
    await priced.execute('breaks');
    await new ParseAgent({ masterKeyAudit: false }, s).execute('probe');
    const [ok, failed, unpriced] = events;
    expect(ok.est_input_tokens).toBeGreaterThan(90);
    expect(ok.est_cost_usd).toBe(Math.round(ok.est_input_tokens! * 3) / 1e6);
    expect(ok.error_class).toBeUndefined();
    expect(failed).toMatchObject({ success: false, error_class: 'TypeError' });
    expect(failed.est_cost_usd).toBeUndefined();
    expect(unpriced.est_input_tokens).toBe(ok.est_input_tokens);
    expect(unpriced).not.toHaveProperty('est_cost_usd');
  });
});
