import 'reflect-metadata';
import Ajv from 'ajv';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { inMemoryAgentServices } from '../../../../test/fixtures/in-memory-agent';
import { suppressSecurityBanners } from '../core/security-banner';
import { AgentMethod } from '../metadata/decorators/agent-method.decorator';
import { ParseClass } from '../metadata/decorators/parse-class.decorator';
import { ParseAgent } from './parse-agent';

class RefundDto {
  @IsInt()
  @Min(1)
  @Max(10_000)
  cents!: number;

  @IsOptional()
  @IsIn(['damaged', 'late'])
  reason?: string;
}

@ParseClass('Invoice')
class Invoice {
  status!: string;

  @AgentMethod({ permission: 'readonly', description: 'Totals the invoice.' })
  total() {
    return { total: 1 };
  }

  @AgentMethod({
    permission: 'readonly',
    description: 'Adds a note.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 200 }, pinned: { type: 'boolean' } },
      required: ['text'],
    },
  })
  note(args: Record<string, unknown>) {
    return { noted: args };
  }

  @AgentMethod({ permission: 'readonly', parameters: RefundDto })
  refund(args: RefundDto) {
    return { refunded: args.cents };
  }

  // The boundary is permittedKeys: `internal` is in the schema but never accepted.
  @AgentMethod({
    permission: 'readonly',
    permittedKeys: ['status', 'memo'],
    parameters: {
      type: 'object',
      properties: { status: { type: 'string', enum: ['open', 'closed'] }, internal: {} },
    },
  })
  relabel(args: Record<string, unknown>) {
    return { relabelled: args };
  }
}

/**
 * What an agent tells about its methods and itself, without a server: get_schema lists what
 * call_method accepts for each method (and call_method holds to it), and describe() names whom an
 * aclUser or aclRole agent acts for, as JSON and as lines for operators.
 */
describe('agent methods in get_schema, and describe()', () => {
  const invoiceId = 'inv0000001';
  const { services } = inMemoryAgentServices({
    schemas: { Invoice: { status: 'String', memo: 'String' } },
    rows: { Invoice: [{ objectId: invoiceId, status: 'open' }] },
    models: [Invoice],
  });
  beforeAll(() => suppressSecurityBanners());

  const methodsOf = async (agent: ParseAgent) => {
    const envelope = await agent.execute('get_schema', { class_name: 'Invoice' });
    expect(envelope.success).toBe(true);
    const data = (envelope as { data: { agent_methods: Array<Record<string, unknown>> } }).data;
    return Object.fromEntries(data.agent_methods.map((m) => [m.name as string, m]));
  };

  it('gives every method the schema of the arguments call_method accepts', async () => {
    const methods = await methodsOf(new ParseAgent({}, services));
    const dryRun = { type: 'boolean', description: expect.any(String) };
    expect(methods.total.parameters).toEqual({
      type: 'object',
      properties: { dry_run: dryRun },
      additionalProperties: false,
    });
    expect(methods.note.parameters).toEqual({
      type: 'object',
      properties: {
        text: { type: 'string', maxLength: 200 },
        pinned: { type: 'boolean' },
        dry_run: dryRun,
      },
      required: ['text'],
      additionalProperties: false,
    });
    // Derived from the DTO's class-validator rules.
    expect(methods.refund.parameters).toMatchObject({
      type: 'object',
      properties: {
        cents: { type: 'integer', minimum: 1, maximum: 10_000 },
        reason: { enum: ['damaged', 'late'] },
        dry_run: dryRun,
      },
      required: ['cents'],
      additionalProperties: false,
    });
    expect(methods.relabel.parameters).toEqual({
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['open', 'closed'] },
        memo: { description: expect.any(String) },
        dry_run: dryRun,
      },
      additionalProperties: false,
    });
    expect(methods.relabel.permitted_keys).toEqual(['status', 'memo']);
    expect(methods.total.permitted_keys).toBeUndefined();
  });

  it('call_method accepts what the schema admits and refuses the names it leaves out', async () => {
    const agent = new ParseAgent({}, services);
    const methods = await methodsOf(agent);
    const ajv = new Ajv({ strict: false });
    const cases: Array<[string, Record<string, unknown>]> = [
      ['total', {}],
      ['total', { extra: 1 }],
      ['note', { text: 'hi', pinned: true }],
      ['note', { text: 'hi', colour: 'red' }],
      ['refund', { cents: 5, reason: 'late' }],
      ['refund', { cents: 5, note: 'x' }],
      ['relabel', { status: 'closed', memo: 'm' }],
      ['relabel', { internal: 'x' }],
    ];
    for (const [method, args] of cases) {
      const admitted = ajv.validate(methods[method].parameters as object, args);
      const result = await agent.execute('call_method', {
        class_name: 'Invoice',
        method_name: method,
        object_id: invoiceId,
        arguments: args,
      });
      expect({ method, args, success: result.success }).toEqual({
        method,
        args,
        success: admitted,
      });
    }
  });

  it('names the user or role an aclUser / aclRole agent acts for', () => {
    const user = new ParseAgent({ aclUser: 'u5erId0001' }, services).describe();
    expect(user.auth).toEqual({ mode: 'acl_user', acl_user: 'u5erId0001' });
    expect(user.auth_type).toBe('acl_user');
    const role = new ParseAgent({ aclRole: 'auditors' }, services).describe();
    expect(role.auth).toEqual({ mode: 'acl_role', acl_role: 'auditors' });
    const master = new ParseAgent({}, services).describe();
    expect(master.auth).toEqual({ mode: 'master_key' });
  });

  it('reads as lines for operators, saying the same as the JSON form and no secret', () => {
    const agent = new ParseAgent(
      {
        aclUser: 'u5erId0001',
        tenantId: 'acme',
        classes: { only: ['Invoice'] },
        filters: { Invoice: { status: 'open' } },
      },
      services,
    );
    const text = agent.describe({ format: 'text' });
    expect(typeof text).toBe('string');
    const lines = text.split('\n');
    expect(lines[0]).toBe(`Agent ${String(agent.describe().agent_id)}`);
    expect(text).toMatch(/acts for: +an ACL user 'u5erId0001'/);
    expect(text).toMatch(/permissions: +readonly/);
    expect(text).toMatch(/tenant: +acme/);
    expect(text).toMatch(/class filter: +only Invoice/);
    expect(text).toMatch(/row filters: +Invoice on status/);
    expect(text).not.toContain('open'); // filter values stay out, as in the JSON form
    expect(text).toMatch(/^ {4}Invoice +permitted/m);
    for (const tool of agent.allowedTools()) expect(text).toContain(tool);

    const session = new ParseAgent({ sessionToken: 'r:very-secret', tenantId: 'acme' }, services);
    const sessionText = session.describe({ format: 'text' });
    expect(sessionText).toMatch(/acts for: +a Parse session token \(fingerprint [0-9a-f]{8}\)/);
    expect(sessionText).not.toContain('very-secret');
    expect(session.describe({ format: 'json' })).toEqual(session.describe());
  });
});
