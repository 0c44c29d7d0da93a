import { buildToolCallEvent, type ToolCallAuditInput } from './tool-call-audit';

const agent: ToolCallAuditInput['agent'] = {
  agentId: 'agent_1',
  permissions: 'readonly',
  authType: 'acl_user',
  usingMasterKey: false,
  aclUser: 'u_alice',
  agentDepth: 1,
  parentAgentId: 'agent_0',
  correlationId: 'corr-9',
  tenantId: 'acme',
};

function event(overrides: Partial<ToolCallAuditInput> = {}) {
  return buildToolCallEvent({
    agent,
    toolName: 'query_class',
    args: {},
    envelope: { success: true, data: { results: [] } },
    durationMs: 12,
    filters: {},
    agentFilters: {},
    ...overrides,
  });
}

describe('buildToolCallEvent', () => {
  it('names the argument keys but never a value, and leaves sensitive keys out entirely', () => {
    const e = event({
      args: {
        class_name: 'Payroll',
        where: { salary: { $gt: 100_000 } },
        pipeline: [{ $match: { ssn: '123' } }],
        session_token: 'r:secret',
        keys: ['ssn'],
        limit: 5,
      },
    });
    expect(e.args_keys).toEqual(['class_name', 'limit']);
    const text = JSON.stringify(e);
    for (const leaked of ['Payroll', '100000', 'ssn', 'r:secret', '123']) {
      expect(text).not.toContain(leaked);
    }
  });

  it('says who called, from where in the agent tree, and that a tenant scope applied (not which)', () => {
    expect(event()).toMatchObject({
      tool: 'query_class',
      auth_type: 'acl_user',
      using_master_key: false,
      permissions: 'readonly',
      agent_id: 'agent_1',
      agent_depth: 1,
      parent_agent_id: 'agent_0',
      correlation_id: 'corr-9',
      tenant_scoped: true,
      duration_ms: 12,
    });
    expect(JSON.stringify(event())).not.toContain('acme');
    expect(JSON.stringify(event())).not.toContain('u_alice');
  });

  it('reports the size of a success and the code and denial kind of a failure', () => {
    const ok = event({ envelope: { success: true, data: { n: 'x'.repeat(100) } } });
    expect(ok.success).toBe(true);
    expect(ok.result_size).toBe(JSON.stringify({ n: 'x'.repeat(100) }).length);
    expect(ok.est_input_tokens).toBe(Math.floor(ok.result_size! / 4));
    expect(ok).not.toHaveProperty('error_code');

    const denied = event({
      envelope: {
        success: false,
        error: 'Access denied',
        error_code: 'access_denied',
        details: { kind: 'hidden_class' },
      },
    });
    expect(denied).toMatchObject({
      success: false,
      error_code: 'access_denied',
      denial_kind: 'hidden_class',
    });
    expect(denied).not.toHaveProperty('result_size');
  });

  it('lists filter names and the field names of per-class filters, never their values', () => {
    const e = event({
      filters: {
        classes: { only: new Set(['Order', 'Customer']), except: new Set() },
        tools: { except: new Set(['export_data']) },
      },
      agentFilters: { Order: { $or: [{ region: 'north' }, { total: { $gt: 5 } }] } },
    });
    expect(e.classes_only).toEqual(['Customer', 'Order']);
    expect(e).not.toHaveProperty('classes_except');
    expect(e.tools_except).toEqual(['export_data']);
    expect(e.filters).toEqual({ Order: ['region', 'total'] });
    expect(JSON.stringify(e)).not.toContain('north');
  });

  it('leaves out what does not apply (no tenant, no parent, no filters)', () => {
    const root = buildToolCallEvent({
      agent: {
        agentId: 'a',
        permissions: 'admin',
        authType: 'master_key',
        usingMasterKey: true,
        agentDepth: 0,
      },
      toolName: 'count_objects',
      args: {},
      envelope: { success: true, data: 1 },
      durationMs: 1,
      filters: {},
      agentFilters: {},
    });
    for (const key of [
      'tenant_scoped',
      'parent_agent_id',
      'correlation_id',
      'filters',
      'classes_only',
    ]) {
      expect(root).not.toHaveProperty(key);
    }
  });
});
