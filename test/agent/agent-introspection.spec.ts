import { ParseAgentConfigError, RecursionLimitExceededError } from 'nestjs-parse-agent';
import { CORE_MODELS, Order } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { createObject } from '../harness/fixtures';

describe('agent introspection and sub-agents', () => {
  let bed: AgentTestBed;
  beforeAll(async () => {
    bed = await createAgentTestBed(CORE_MODELS);
  });
  afterAll(() => bed.close());

  it('describes itself without secrets', () => {
    const agent = bed.factory.create({
      sessionToken: 'r:secret-token',
      tenantId: 'acme',
      classes: ['Order'],
    });
    const d = agent.describe();
    expect(d).toMatchObject({
      auth_type: 'session_token',
      using_master_key: false,
      permissions: 'readonly',
      tenant_id: 'acme',
    });
    expect(JSON.stringify(d)).not.toContain('secret-token');
    expect(d.auth).toEqual({
      mode: 'session_token',
      fingerprint: expect.stringMatching(/^[0-9a-f]{8}$/),
    });
    expect(d.classes).toEqual({ only: ['Order'], except: null });
    expect(d).toMatchObject({
      methods: { only: null, except: null },
      strict_modes: { tool_filter: false, class_filter: false },
      correlation_id: null,
    });
    expect(d.hidden_classes).toEqual(expect.arrayContaining(['_Session', 'ApiCredential']));
    expect((d.per_class as Record<string, unknown>).Customer).toMatchObject({
      accessible: 'denied',
    });
  });

  it('answers wouldPermit without running anything', () => {
    const agent = bed.factory.create({ tenantId: 'acme', classes: { except: ['Customer'] } });
    expect(agent.wouldPermit('query_class', { className: 'Order' })).toEqual({ allowed: true });
    expect(agent.wouldPermit('query_class', { className: 'Customer' })).toEqual({
      allowed: false,
      reason: 'class_filter',
      denied_at: 'assert_class_accessible',
    });
    expect(agent.wouldPermit('query_class', { className: 'ApiCredential' })).toEqual({
      allowed: false,
      reason: 'class_not_found',
      denied_at: 'assert_class_accessible',
    });
    expect(agent.wouldPermit('create_object')).toEqual({
      allowed: false,
      reason: 'permission_denied',
      denied_at: 'permission_tier',
    });
    const filtered = bed.factory.create({ tools: { except: ['count_objects'] } });
    expect(filtered.wouldPermit('count_objects')).toEqual({
      allowed: false,
      reason: 'tool_filtered',
      denied_at: 'allowed_tools',
    });
    const unbound = bed.factory.create({ sessionToken: 'r:x' });
    expect(unbound.wouldPermit('query_class', { className: 'Order' })).toEqual({
      allowed: false,
      reason: 'tenant_scope',
      denied_at: 'tenant_scope',
    });
  });

  it('reports the filter it applies to a class, by name or by model', () => {
    const agent = bed.factory.create({ filters: { Order: { status: 'paid' }, default: { a: 1 } } });
    expect(agent.filterFor(Order)).toEqual({ $and: [{ status: 'paid' }, { a: 1 }] });
    expect(agent.filterFor('Tenant')).toEqual({ a: 1 });
    expect(agent.describeFor(Order)).toMatchObject({
      class_name: 'Order',
      accessible: 'permitted',
      agent_canonical_filter: { isDeleted: { $ne: true } },
      per_agent_filter: { $and: [{ status: 'paid' }, { a: 1 }] },
    });
    expect(agent.describeFor('ApiCredential')).toMatchObject({ accessible: 'denied' });
  });

  it('only narrows in sub-agents and stops at the recursion limit', () => {
    const parent = bed.factory.create({
      sessionToken: 'r:p',
      tenantId: 'acme',
      classes: ['Order', 'Tenant'],
      recursionDepth: 1,
    });
    const child = parent.subAgent({ classes: ['Order'] });
    expect(child.sessionToken).toBe('r:p');
    expect(child.tenantId).toBe('acme');
    expect(child.agentDepth).toBe(1);
    expect(child.wouldPermit('query_class', { className: 'Tenant' }).allowed).toBe(false);
    expect(() => parent.subAgent({ permissions: 'admin' })).toThrow(ParseAgentConfigError);
    expect(() => parent.subAgent({ tenantId: 'globex' })).toThrow(ParseAgentConfigError);
    expect(() => parent.subAgent({ classes: ['Customer'] })).toThrow(ParseAgentConfigError);
    expect(() => child.subAgent()).toThrow(RecursionLimitExceededError);
  });

  it('refuses bad options at construction with a message that says what to fix', () => {
    expect(() => bed.factory.create({ permissions: 'root' as never })).toThrow(
      /readonly, write, admin/,
    );
    expect(() => bed.factory.create({ sessionToken: 'r:a', aclRole: 'x' })).toThrow(
      /only one identity/,
    );
    expect(() => bed.factory.create({ aclRole: 'staff' })).toThrow(/direct database path/);
    expect(() => bed.factory.create({ filters: { Order: { $where: '1' } } })).toThrow(
      /filters.Order/,
    );
    expect(() => bed.factory.create({ tools: { only: ['nope'] }, strictToolFilter: true })).toThrow(
      /unknown tool/,
    );
    expect(() => bed.factory.create({ classes: { bogus: [] } as never })).toThrow(/only/);
  });
});

describe('registry changes reach agents that already exist', () => {
  it('refuses a class hidden after the agent first read it', async () => {
    // The class must exist on the server: a missing class is refused like a hidden one.
    await createObject('Tenant', { slug: 'introspection-probe' });
    const bed = await createAgentTestBed(CORE_MODELS);
    const agent = bed.factory.create();
    expect((await agent.execute('count_objects', { class_name: 'Tenant' })).success).toBe(true);
    bed.metadata.hide('Tenant');
    expect(await agent.execute('count_objects', { class_name: 'Tenant' })).toMatchObject({
      success: false,
      error_code: 'access_denied',
      details: { kind: 'class_not_found' },
    });
    expect(agent.access.isDenied('Tenant')).toBe(true);
    await bed.close();
  });
});
