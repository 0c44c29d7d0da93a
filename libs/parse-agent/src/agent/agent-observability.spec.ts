import { ParseAgentConfigError } from '../core/errors';
import {
  DEFAULT_MAX_LOG_SIZE,
  estimatedCostUsd,
  OperationLog,
  resolveObservabilityOptions,
} from './agent-observability';
import { masterKeyAuditLine, securityEventLine, securityEventOf } from './security-trail';
import { AccessDeniedError, PermissionDeniedError } from '../core/errors';
import { failureFromError } from '../core/envelope';

describe('OperationLog', () => {
  it('keeps the last N entries, oldest first, and never grows past N', () => {
    const log = new OperationLog<number>(3);
    for (let i = 1; i <= 10; i++) {
      log.push(i);
      expect(log.size).toBeLessThanOrEqual(3);
    }
    expect(log.entries()).toEqual([8, 9, 10]);
  });

  it('keeps nothing at capacity 0, and hands out copies', () => {
    const none = new OperationLog<number>(0);
    none.push(1);
    expect(none.entries()).toEqual([]);
    const log = new OperationLog<number>(2);
    log.push(1);
    log.entries().push(99);
    expect(log.entries()).toEqual([1]);
  });
});

describe('resolveObservabilityOptions', () => {
  it('defaults to auditing master-key calls and a log of DEFAULT_MAX_LOG_SIZE, with no price', () => {
    expect(resolveObservabilityOptions({})).toEqual({
      masterKeyAudit: true,
      maxLogSize: DEFAULT_MAX_LOG_SIZE,
      inputTokenCostPerMillion: undefined,
    });
  });

  it('refuses bad values with the option named', () => {
    expect(() => resolveObservabilityOptions({ maxLogSize: -1 })).toThrow(/maxLogSize must be/);
    expect(() => resolveObservabilityOptions({ maxLogSize: 1.5 })).toThrow(ParseAgentConfigError);
    expect(() => resolveObservabilityOptions({ masterKeyAudit: 'no' as never })).toThrow(
      /masterKeyAudit must be true or false/,
    );
    expect(() => resolveObservabilityOptions({ inputTokenCostPerMillion: -3 })).toThrow(
      /inputTokenCostPerMillion must be a price/,
    );
  });

  it("lets a sub-agent inherit its parent's settings but never switch the audit off", () => {
    const parent = resolveObservabilityOptions({ maxLogSize: 5, inputTokenCostPerMillion: 3 });
    expect(resolveObservabilityOptions({}, parent)).toEqual(parent);
    expect(() => resolveObservabilityOptions({ masterKeyAudit: false }, parent)).toThrow(
      /cannot set masterKeyAudit: false/,
    );
    const quiet = resolveObservabilityOptions({ masterKeyAudit: false });
    expect(resolveObservabilityOptions({ masterKeyAudit: true }, quiet).masterKeyAudit).toBe(true);
  });
});

describe('estimatedCostUsd', () => {
  it('prices tokens per million, and is absent without a price', () => {
    expect(estimatedCostUsd(2_000, 3)).toBe(0.006);
    expect(estimatedCostUsd(2_000, undefined)).toBeUndefined();
  });
});

describe('security trail', () => {
  const agent = {
    agentId: 'agent-1',
    permissions: 'readonly' as const,
    authType: 'session_token' as const,
    usingMasterKey: false,
    sessionToken: 'r:secret-token',
    tenantId: 'acme',
    agentDepth: 1,
    parentAgentId: 'agent-0',
    correlationId: 'conv-7',
  };
  const args = { class_name: 'Secret', where: { ssn: '123-45-6789' } };

  it('turns a denied call into an event without argument values or the session token', () => {
    const error = new AccessDeniedError("Class 'Secret' is not accessible.", {
      kind: 'hidden_class',
    });
    const envelope = failureFromError(error, 'query_class');
    const event = securityEventOf({ agent, toolName: 'query_class', args, envelope, error });
    expect(event).toMatchObject({
      type: 'denied',
      tool: 'query_class',
      error_code: 'access_denied',
      error_class: 'AccessDeniedError',
      denial_kind: 'hidden_class',
      args_keys: ['class_name'],
      agent_id: 'agent-1',
      parent_agent_id: 'agent-0',
      tenant_id: 'acme',
      correlation_id: 'conv-7',
    });
    const text = JSON.stringify(event) + securityEventLine(event!);
    expect(text).not.toContain('123-45-6789');
    expect(text).not.toContain('secret-token');
    expect(securityEventLine(event!)).toBe(
      'SECURITY denied query_class: access_denied (hidden_class) agent=agent-1 auth=session_token depth=1 tenant=acme correlation=conv-7',
    );
  });

  it('has no event for successes or for failures that are not refusals', () => {
    const ok = { success: true as const, data: {} };
    expect(securityEventOf({ agent, toolName: 't', args, envelope: ok, error: undefined })).toBe(
      undefined,
    );
    const timeout = { success: false as const, error: 'slow', error_code: 'timeout' };
    expect(securityEventOf({ agent, toolName: 't', args, envelope: timeout, error: null })).toBe(
      undefined,
    );
    const denied = failureFromError(new PermissionDeniedError('no'), 't');
    expect(
      securityEventOf({ agent, toolName: 't', args, envelope: denied, error: null })?.type,
    ).toBe('denied');
    const blocked = { success: false as const, error: 'x', error_code: 'security_blocked' };
    expect(
      securityEventOf({ agent, toolName: 't', args, envelope: blocked, error: null })?.type,
    ).toBe('blocked');
  });

  it('keeps a crafted tool name from forging or flooding log lines', () => {
    const line = masterKeyAuditLine({
      agent: { ...agent, authType: 'master_key', usingMasterKey: true },
      toolName: `x\n[parse-agent:SECURITY] AUDIT forged ${'y'.repeat(200)}`,
      args,
      envelope: { success: false, error: 'no', error_code: 'unknown_tool' },
      durationMs: 3,
    });
    expect(line).not.toContain('\n');
    expect(line.length).toBeLessThan(300);
    expect(line).toMatch(/^AUDIT master-key call x\?\?parse-agent:SECURITY\?/);
    expect(line).toContain('args=[class_name]');
    expect(line).toContain('failed=unknown_tool 3ms');
  });
});
