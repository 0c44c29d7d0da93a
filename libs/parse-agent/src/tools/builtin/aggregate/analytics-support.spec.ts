import 'reflect-metadata';
import { inMemoryAgentServices } from '../../../../../../test/fixtures/in-memory-agent';
import { ParseAgent } from '../../../agent/parse-agent';
import { suppressSecurityBanners } from '../../../core/security-banner';
import { timeoutOf } from '../../tool-definition';
import { AgentAllowCollscan, ParseClass } from '../../../metadata/decorators/parse-class.decorator';
import { CollscanRefusedError, maxTimeMsFor } from '../../read/analytics-policy';
import { DRY_RUN_HINT, dryRunEnvelope, leadingMatch } from './analytics-support';

@ParseClass('Order')
class OrderModel {}

@ParseClass('AuditLog')
@AgentAllowCollscan()
class AuditLogModel {}

const rows = {
  Order: [
    { objectId: 'o1', status: 'paid', amount: 10 },
    { objectId: 'o2', status: 'paid', amount: 20 },
    { objectId: 'o3', status: 'open', amount: 5 },
  ],
  AuditLog: [{ objectId: 'a1', action: 'login' }],
};

function agentWith(
  options: Parameters<typeof inMemoryAgentServices>[0]['analytics'] = {},
  scan = false,
) {
  const memory = inMemoryAgentServices({
    schemas: { Order: { status: 'String', amount: 'Number' }, AuditLog: { action: 'String' } },
    rows,
    models: [OrderModel, AuditLogModel],
    analytics: options,
    explain: {
      collectionScan: scan,
      winningPlan: scan ? 'COLLSCAN' : 'IXSCAN',
      details: { stage: 'COLLSCAN' },
    },
  });
  return { ...memory, agent: new ParseAgent({}, memory.services) };
}

beforeAll(() => suppressSecurityBanners());

describe('dry runs of the analytics tools', () => {
  it('return the checked pipeline and the parameters, and never run it', async () => {
    const { agent, calls } = agentWith();
    const result = await agent.execute('group_by', {
      class_name: 'Order',
      field: 'status',
      where: { amount: { $gt: 1 } },
      dry_run: true,
    });
    expect(result.success).toBe(true);
    const data = (result as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({
      dry_run: true,
      class_name: 'Order',
      parameters: { field: 'status', operation: 'count', sort: 'value_desc' },
      hint: DRY_RUN_HINT,
    });
    // Unset parameters are left out rather than shown as null.
    expect(data.parameters).not.toHaveProperty('value_field');
    expect(Array.isArray(data.pipeline)).toBe(true);
    expect(calls.filter((c) => c.operation === 'aggregate')).toEqual([]);
  });

  it('refuse a dry_run that is not a JSON boolean instead of running for real', async () => {
    const { agent, calls } = agentWith();
    const result = await agent.execute('group_by', {
      class_name: 'Order',
      field: 'status',
      dry_run: 'yes',
    });
    expect(result).toMatchObject({ success: false, error_code: 'invalid_argument' });
    expect(calls).toEqual([]);
  });

  it('still run every access check: a dry run on a hidden field is refused', async () => {
    const { agent } = agentWith();
    const result = await agent.execute('group_by', {
      class_name: 'Order',
      field: 'status',
      where: { _rperm: 'u_bob' },
      dry_run: true,
    });
    expect(result).toMatchObject({ success: false, error_code: 'access_denied' });
  });
});

describe('the COLLSCAN pre-flight (refuseCollscan)', () => {
  const call = { class_name: 'Order', pipeline: [{ $match: { status: 'paid' } }] };

  it('is off by default: the pipeline runs without an explain', async () => {
    const { agent, calls } = agentWith({}, true);
    expect((await agent.execute('aggregate', call)).success).toBe(true);
    expect(calls.map((c) => c.operation)).toEqual(['aggregate']);
  });

  it('refuses a full scan before the pipeline runs, and hides the plan unless exposeExplain', async () => {
    const { agent, calls } = agentWith({ refuseCollscan: true }, true);
    const result = await agent.execute('aggregate', call);
    expect(result).toMatchObject({
      success: false,
      error_code: 'security_blocked',
      details: { refused: true },
    });
    expect(JSON.stringify(result)).not.toContain('winning_plan');
    expect(calls.map((c) => c.operation)).toEqual(['explain']);

    const exposed = agentWith({ refuseCollscan: true, exposeExplain: true }, true);
    const shown = await exposed.agent.execute('aggregate', call);
    expect(shown).toMatchObject({ details: { winning_plan: { stage: 'COLLSCAN' } } });
  });

  it('lets an indexed plan, a class marked @AgentAllowCollscan and an unfiltered call through', async () => {
    const indexed = agentWith({ refuseCollscan: true }, false);
    expect((await indexed.agent.execute('aggregate', call)).success).toBe(true);

    const scanning = agentWith({ refuseCollscan: true }, true);
    const allowed = await scanning.agent.execute('aggregate', {
      class_name: 'AuditLog',
      pipeline: [{ $match: { action: 'login' } }],
    });
    expect(allowed.success).toBe(true);
    const unfiltered = await scanning.agent.execute('aggregate', {
      class_name: 'Order',
      pipeline: [{ $limit: 1 }],
    });
    expect(unfiltered.success).toBe(true);
    expect(scanning.calls.filter((c) => c.operation === 'explain')).toEqual([]);
  });
});

describe('analytics helpers', () => {
  it('maxTimeMsFor leaves the database five seconds before the tool gives up, never under one', () => {
    expect(maxTimeMsFor({ timeoutMs: 60_000 })).toBe(55_000);
    expect(maxTimeMsFor({ timeoutMs: 5_500 })).toBe(1_000);
    expect(maxTimeMsFor({ timeoutMs: 100 })).toBe(1_000);
  });

  it('the pushed-down limit reaches the data path with the pipeline', async () => {
    const { agent, calls, services } = agentWith();
    await agent.execute('aggregate', { class_name: 'Order', pipeline: [{ $limit: 1 }] });
    const timeoutMs = timeoutOf(services.tools.get('aggregate')!) * 1000;
    expect(calls[0].detail).toMatchObject({ maxTimeMS: maxTimeMsFor({ timeoutMs }) });
  });

  it('leadingMatch takes only a first-stage $match object', () => {
    expect(leadingMatch([{ $match: { a: 1 } }, { $limit: 1 }])).toEqual({ a: 1 });
    expect(leadingMatch([{ $limit: 1 }, { $match: { a: 1 } }])).toBeUndefined();
    expect(leadingMatch([{ $match: [1] }])).toBeUndefined();
    expect(leadingMatch({ $match: { a: 1 } })).toBeUndefined();
    expect(leadingMatch([])).toBeUndefined();
  });

  it('dryRunEnvelope drops unset parameters and keeps the caller-level pipeline as given', () => {
    const pipeline = [{ $group: { _id: '$status' } }];
    expect(dryRunEnvelope('Order', { field: 'status', limit: undefined }, pipeline)).toEqual({
      dry_run: true,
      class_name: 'Order',
      parameters: { field: 'status' },
      pipeline,
      hint: DRY_RUN_HINT,
    });
  });

  it('CollscanRefusedError carries the plan only when one is given', () => {
    expect(new CollscanRefusedError('Order').details).not.toHaveProperty('winning_plan');
    expect(new CollscanRefusedError('Order', { stage: 'COLLSCAN' }).details).toMatchObject({
      refused: true,
      winning_plan: { stage: 'COLLSCAN' },
    });
  });
});
