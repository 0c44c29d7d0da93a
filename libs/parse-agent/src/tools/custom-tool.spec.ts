import 'reflect-metadata';
import { inMemoryAgentServices } from '../../../../test/fixtures/in-memory-agent';
import { ParseAgent, type AgentOptions } from '../agent/parse-agent';
import { ParseAgentConfigError } from '../core/errors';
import { suppressSecurityBanners } from '../core/security-banner';
import { AgentTenantScope } from '../metadata/decorators/agent-tenant-scope.decorator';
import { ParseClass } from '../metadata/decorators/parse-class.decorator';
import type { PolicedToolContext } from './custom-tool';
import type { ToolContext } from './tool-context';

@ParseClass('Invoice')
@AgentTenantScope('tenant', { from: (agent) => agent.tenantId })
class InvoiceModel {}

const invoices = [
  { objectId: 'a1', tenant: 'acme', total: 10 },
  { objectId: 'a2', tenant: 'acme', total: 20 },
  { objectId: 'g1', tenant: 'globex', total: 99 },
];

/**
 * Custom tools without a server: what the handler of a tool that declares nothing receives, and
 * which agents a tool declaring `access: 'master'` is offered to. The integration suite
 * (test/agent/custom-tool-access.e2e.spec.ts) checks the same against Parse REST.
 */
describe('custom tools: policed unless they declare master access', () => {
  beforeAll(() => suppressSecurityBanners());

  function setup() {
    const memory = inMemoryAgentServices({
      schemas: { Invoice: { tenant: 'String', total: 'Number' } },
      rows: { Invoice: invoices },
      models: [InvoiceModel],
    });
    const agent = (options: AgentOptions = {}) => new ParseAgent(options, memory.services);
    return { ...memory, agent, tools: memory.services.tools };
  }

  it('gives a tool that declares nothing the policed reader, scoped to the agent', async () => {
    const { tools, agent } = setup();
    let seen: PolicedToolContext | undefined;
    tools.register({
      name: 'invoice_totals',
      description: 'Totals of the invoices the agent may read.',
      handler: async (_args, context) => {
        seen = context;
        const page = await context.read.find('Invoice', { keys: ['total'], limit: 100 });
        return { ids: page.rows.map((r) => r.objectId) };
      },
    });
    expect(tools.get('invoice_totals')?.access).toBe('policed');
    const result = await agent({ tenantId: 'acme' }).execute('invoice_totals');
    expect(result).toEqual({ success: true, data: { ids: ['a1', 'a2'] } });
    // No raw path is reachable from the context, and asking says what to do instead.
    for (const member of ['data', 'dataFor', 'writeData'] as const) {
      expect(() => (seen as unknown as ToolContext)[member]).toThrow(ParseAgentConfigError);
      expect(() => (seen as unknown as ToolContext)[member]).toThrow(/access: 'master'/);
    }
    expect(seen?.write).toBeDefined();
  });

  it("offers a tool that declares access: 'master' to master-key agents only", async () => {
    const { tools, agent, calls } = setup();
    tools.register({
      name: 'all_invoices',
      description: 'Every invoice, with the master key.',
      access: 'master',
      handler: async (_args, context) => ({
        count: await context.data.count('Invoice', {}, context.signal),
      }),
    });
    const operator = agent({});
    expect(operator.allowedTools()).toContain('all_invoices');
    expect(await operator.execute('all_invoices')).toEqual({ success: true, data: { count: 3 } });

    const session = agent({ sessionToken: 'r:alice', tenantId: 'acme' });
    expect(session.allowedTools()).not.toContain('all_invoices');
    expect(session.toolDefinitions().map((t) => t.name)).not.toContain('all_invoices');
    expect(session.wouldPermit('all_invoices')).toEqual({
      allowed: false,
      reason: 'access_denied',
      denied_at: 'master_access',
    });
    const before = calls.length;
    expect(await session.execute('all_invoices')).toMatchObject({
      success: false,
      error_code: 'access_denied',
      error: expect.stringMatching(/only available to master-key agents/),
    });
    // Refused before the handler ran: no read reached the path.
    expect(calls.length).toBe(before);
    // A scoped sub-agent of the operator is no master-key agent either.
    expect(operator.subAgent({ sessionToken: 'r:bob' }).allowedTools()).not.toContain(
      'all_invoices',
    );
  });

  it('refuses an unknown access value and a master tool that claims to be client-safe', () => {
    const { tools } = setup();
    expect(() =>
      tools.register({
        name: 'odd_access',
        description: 'x',
        access: 'raw' as never,
        handler: () => 1,
      }),
    ).toThrow(/access must be 'policed'/);
    expect(() =>
      tools.register({
        name: 'contradiction',
        description: 'x',
        access: 'master',
        clientSafe: true,
        handler: () => 1,
      }),
    ).toThrow(/clientSafe: true contradicts it/);
  });

  it("lets a tool write only as far as its declared tier, through the agent's write policy", async () => {
    const { tools, agent } = setup();
    tools.register({
      name: 'readonly_writer',
      description: 'Tries to write from a readonly tool.',
      handler: (_args, { write }) => write.create('Invoice', { total: 1 }),
    });
    tools.register({
      name: 'spoofing_writer',
      description: 'Tries to create an invoice in another tenant.',
      permission: 'write',
      handler: (_args, { write }) => write.create('Invoice', { total: 1, tenant: 'globex' }),
    });
    const acme = agent({ tenantId: 'acme', permissions: 'write' });
    expect(await acme.execute('readonly_writer')).toMatchObject({
      success: false,
      error_code: 'access_denied',
      error: expect.stringMatching(/declared readonly and cannot create/),
    });
    expect(await acme.execute('spoofing_writer')).toMatchObject({
      success: false,
      error_code: 'access_denied',
      details: { kind: 'tenant_scope' },
    });
  });
});
