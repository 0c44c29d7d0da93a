import type { MutationEvent, ParseAgent } from 'nestjs-parse-agent';
import { CORE_MODELS, SupportTicket } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { seedDemo } from '../harness/demo-data';
import { findRows, parseRest } from '../harness/parse-rest';

const GATES = [
  'PARSE_AGENT_ALLOW_WRITE_TOOLS',
  'PARSE_AGENT_ALLOW_RAW_CRUD',
  'PARSE_AGENT_ALLOW_SCHEMA_OPS',
  'PARSE_AGENT_ALLOW_RAW_SCHEMA',
] as const;

function setGates(on: readonly string[]): void {
  for (const g of GATES) {
    if (on.includes(g)) process.env[g] = 'true';
    else delete process.env[g];
  }
}

async function row(className: string, objectId: string): Promise<Data> {
  return parseRest<Data>('GET', `/classes/${className}/${objectId}`, undefined, {
    masterKey: true,
  });
}

describe('writes on a real Parse Server (demo dataset)', () => {
  let bed: AgentTestBed;
  let tokens: { alice: string; bob: string; carol: string };
  let mutations: MutationEvent[];
  let acmeOrder: Data;
  let globexOrder: Data;
  let aliceTicket: Data;
  let acmeCustomerId: string;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const g of GATES) saved[g] = process.env[g];
    tokens = await seedDemo();
    // AgentScratch is created at run time without a model: let agents see unregistered classes.
    bed = await createAgentTestBed(CORE_MODELS, { unregisteredClasses: 'visible' });
    bed.metadata.register(SupportTicket);
    mutations = [];
    bed.events.mutations$.subscribe((e) => mutations.push(e));
    [acmeOrder] = await findRows(
      'Order',
      { tenantId: 'acme', isDeleted: false, status: 'paid' },
      { masterKey: true },
      { limit: '1' },
    );
    [globexOrder] = await findRows(
      'Order',
      { tenantId: 'globex', isDeleted: false, status: 'paid' },
      { masterKey: true },
      { limit: '1' },
    );
    [aliceTicket] = await findRows(
      'SupportTicket',
      { tenantId: 'acme', status: 'open' },
      { sessionToken: tokens.alice },
      { limit: '1' },
    );
    const [customer] = await findRows(
      'Customer',
      { tenantId: 'acme', isDeleted: false },
      { masterKey: true },
      { limit: '1' },
    );
    acmeCustomerId = customer.objectId as string;
  }, 60_000);

  afterAll(async () => {
    for (const g of GATES) {
      if (saved[g] === undefined) delete process.env[g];
      else process.env[g] = saved[g];
    }
    await bed.close();
  });

  beforeEach(() => {
    mutations.length = 0;
    setGates(GATES);
  });

  const alice = (extra: Record<string, unknown> = {}): ParseAgent =>
    bed.factory.create({
      sessionToken: tokens.alice,
      tenantId: 'acme',
      permissions: 'write',
      allowMutations: true,
      ...extra,
    });

  describe('operator gates', () => {
    it('refuses raw writes with the names of the missing switches, and changes nothing', async () => {
      setGates(['PARSE_AGENT_ALLOW_WRITE_TOOLS']);
      const result = refused(
        await alice().execute('update_object', {
          class_name: 'Order',
          object_id: acmeOrder.objectId,
          values: { status: 'shipped' },
        }),
      );
      expect(result.error_code).toBe('access_denied');
      expect(result.error).toContain('PARSE_AGENT_ALLOW_RAW_CRUD=true');
      expect(result.error).not.toContain('PARSE_AGENT_ALLOW_WRITE_TOOLS=true');
      expect((await row('Order', acmeOrder.objectId)).status).toBe('paid');
      expect(mutations).toEqual([]);
    });

    it('refuses write methods, dry runs included, without PARSE_AGENT_ALLOW_WRITE_TOOLS', async () => {
      setGates([]);
      const result = refused(
        await alice().execute('call_method', {
          class_name: 'Order',
          method_name: 'refund',
          object_id: acmeOrder.objectId,
          arguments: { reason: 'damaged', dry_run: true },
        }),
      );
      expect(result.error_code).toBe('access_denied');
      expect(result.error).toContain('PARSE_AGENT_ALLOW_WRITE_TOOLS=true');
    });

    it('keeps raw CRUD out of a session agent unless allowMutations is set', async () => {
      const agent = alice({ allowMutations: undefined });
      expect(agent.allowedTools()).not.toContain('update_object');
      const result = refused(
        await agent.execute('update_object', {
          class_name: 'Order',
          object_id: acmeOrder.objectId,
          values: { status: 'shipped' },
        }),
      );
      expect(result.error_code).toBe('access_denied');
      expect(result.error).toContain('allowMutations: true');
    });

    it('never offers schema tools to a session-token agent (client mode ceiling)', async () => {
      const admin = alice({ permissions: 'admin' });
      expect(admin.allowedTools()).toEqual(expect.arrayContaining(['delete_object']));
      expect(admin.allowedTools()).not.toContain('create_class');
      const result = refused(
        await admin.execute('create_class', { class_name: 'Scratch', fields: {} }),
      );
      expect(result.error).toContain('master key');
    });
  });

  describe('raw writes by alice (acme, session token)', () => {
    it('updates her own tenant’s row through her session', async () => {
      const data = ok(
        await alice().execute('update_object', {
          class_name: 'Order',
          object_id: acmeOrder.objectId,
          values: { status: 'shipped' },
        }),
      );
      expect(data).toMatchObject({ object_id: acmeOrder.objectId, changed_keys: ['status'] });
      expect((await row('Order', acmeOrder.objectId)).status).toBe('shipped');
      expect(mutations).toHaveLength(1);
      expect(mutations[0]).toMatchObject({
        action: 'update',
        class_name: 'Order',
        object_id: acmeOrder.objectId,
        changed_keys: ['status'],
        auth_type: 'session_token',
        tenant_id: 'acme',
      });
      expect(JSON.stringify(mutations[0])).not.toContain('shipped');
      await parseRest(
        'PUT',
        `/classes/Order/${acmeOrder.objectId}`,
        { status: 'paid' },
        {
          masterKey: true,
        },
      );
    });

    it('answers "not found" for a globex row and leaves it alone', async () => {
      const result = refused(
        await alice().execute('update_object', {
          class_name: 'Order',
          object_id: globexOrder.objectId,
          values: { status: 'cancelled' },
        }),
      );
      expect(result.error).toContain('Object not found');
      expect((await row('Order', globexOrder.objectId)).status).toBe('paid');
      expect(mutations).toEqual([]);
    });

    it('refuses a hidden class', async () => {
      const result = refused(
        await alice().execute('create_object', {
          class_name: 'ApiCredential',
          values: { service: 'x' },
        }),
      );
      expect(result).toMatchObject({
        error_code: 'access_denied',
        details: { kind: 'class_not_found' },
      });
    });

    it('refuses a field outside the allowlist', async () => {
      const result = refused(
        await alice().execute('update_object', {
          class_name: 'Order',
          object_id: acmeOrder.objectId,
          values: { isDeleted: true },
        }),
      );
      expect(result).toMatchObject({
        error_code: 'access_denied',
        details: { kind: 'field_denied' },
      });
      expect((await row('Order', acmeOrder.objectId)).isDeleted).toBe(false);
    });

    it('refuses to move a row to another tenant', async () => {
      const result = refused(
        await alice().execute('update_object', {
          class_name: 'Order',
          object_id: acmeOrder.objectId,
          values: { tenantId: 'globex' },
        }),
      );
      expect(result).toMatchObject({
        error_code: 'access_denied',
        details: { kind: 'tenant_scope' },
      });
      expect((await row('Order', acmeOrder.objectId)).tenantId).toBe('acme');
    });

    it.each([['ACL'], ['authData'], ['_rperm'], ['objectId']])('never writes %s', async (field) => {
      const result = refused(
        await alice().execute('update_object', {
          class_name: 'SupportTicket',
          object_id: aliceTicket.objectId,
          values: { [field]: { '*': { read: true, write: true } } },
        }),
      );
      expect(result).toMatchObject({
        error_code: 'access_denied',
        details: { kind: 'internal_field' },
      });
    });

    it('creates in her tenant, and refuses to create in another', async () => {
      const data = ok(
        await alice().execute('create_object', {
          class_name: 'SupportTicket',
          values: { subject: 'Printer on fire', priority: 'urgent', status: 'open' },
        }),
      );
      const created = await row('SupportTicket', data.object_id);
      expect(created).toMatchObject({ tenantId: 'acme', subject: 'Printer on fire' });
      expect(data.changed_keys).toEqual(['priority', 'status', 'subject', 'tenantId']);
      const other = refused(
        await alice().execute('create_object', {
          class_name: 'SupportTicket',
          values: { subject: 'x', tenantId: 'globex' },
        }),
      );
      expect(other).toMatchObject({ details: { kind: 'tenant_scope' } });
      const globexTickets = await findRows('SupportTicket', { subject: 'x' }, { masterKey: true });
      expect(globexTickets).toEqual([]);
    });

    it('lets Parse refuse what her session may not do (Customer update needs role:admin)', async () => {
      const result = refused(
        await alice().execute('update_object', {
          class_name: 'Customer',
          object_id: acmeCustomerId,
          values: { tier: 'gold' },
        }),
      );
      expect(result.error_code).toBe('parse_error');
      expect(mutations).toEqual([]);
    });
  });

  describe('agent methods', () => {
    it('previews a refund without changing the row, then refunds', async () => {
      const preview = ok(
        await alice().execute('call_method', {
          class_name: 'Order',
          method_name: 'refund',
          object_id: acmeOrder.objectId,
          arguments: { reason: 'arrived broken', dry_run: true },
        }),
      );
      expect(preview).toMatchObject({
        dry_run: true,
        result: { would_refund: acmeOrder.orderNumber, from: 'paid', to: 'refunded' },
      });
      expect((await row('Order', acmeOrder.objectId)).status).toBe('paid');
      expect(mutations).toEqual([]);

      const done = ok(
        await alice().execute('call_method', {
          class_name: 'Order',
          method_name: 'refund',
          object_id: acmeOrder.objectId,
          arguments: { reason: 'arrived broken' },
        }),
      );
      expect(done.result).toMatchObject({ refunded: acmeOrder.orderNumber });
      expect((await row('Order', acmeOrder.objectId)).status).toBe('refunded');
      expect(mutations).toEqual([
        expect.objectContaining({
          action: 'call_method',
          method: 'Order.refund',
          object_id: acmeOrder.objectId,
          changed_keys: ['status'],
        }),
      ]);
      expect(JSON.stringify(mutations)).not.toContain('arrived broken');
      await parseRest(
        'PUT',
        `/classes/Order/${acmeOrder.objectId}`,
        { status: 'paid' },
        {
          masterKey: true,
        },
      );
    });

    it('says a write the row ACL refuses may lack write access, right after a dry run passed', async () => {
      // An acme order alice may read but not write (its ACL grants her read only).
      const me = await parseRest<Data>('GET', '/users/me', undefined, {
        sessionToken: tokens.alice,
      });
      const copy: Data = { ...acmeOrder, orderNumber: `${acmeOrder.orderNumber}-RO` };
      for (const key of ['objectId', 'createdAt', 'updatedAt', 'ACL']) delete copy[key];
      const created = await parseRest<Data>(
        'POST',
        '/classes/Order',
        { ...copy, ACL: { [me.objectId]: { read: true } } },
        { masterKey: true },
      );
      const objectId = created.objectId as string;
      try {
        const call = (extra: Data = {}) =>
          alice().execute('call_method', {
            class_name: 'Order',
            method_name: 'refund',
            object_id: objectId,
            arguments: { reason: 'arrived broken', ...extra },
          });
        const preview = ok(await call({ dry_run: true }));
        expect(preview).toMatchObject({ dry_run: true, result: { to: 'refunded' } });
        expect(preview.dry_run_note).toMatch(/does not check write permission/);

        for (const result of [
          refused(await call()),
          refused(
            await alice().execute('update_object', {
              class_name: 'Order',
              object_id: objectId,
              values: { status: 'shipped' },
            }),
          ),
        ]) {
          expect(result.error_code).toBe('parse_error');
          expect(result.error).toContain(`Object not found: Order#${objectId}`);
          expect(result.error).toMatch(/may lack write access/);
          expect(result.error).toMatch(/dry run checks only what the user can read/i);
        }
        expect((await row('Order', objectId)).status).toBe(acmeOrder.status);
        expect(mutations).toEqual([]);

        // A row that really is missing is refused before the write, as get_object answers it.
        const missing = refused(
          await alice().execute('update_object', {
            class_name: 'Order',
            object_id: 'zzzzzzzzzz',
            values: { status: 'shipped' },
          }),
        );
        expect(missing.error_code).toBe('not_found');
        expect(missing.error).toBe('Object not found: Order#zzzzzzzzzz');
      } finally {
        await parseRest('DELETE', `/classes/Order/${objectId}`, undefined, { masterKey: true });
      }
    });

    it('gives the universal preview for a method without its own dry run', async () => {
      const preview = ok(
        await alice().execute('call_method', {
          class_name: 'SupportTicket',
          method_name: 'close',
          object_id: aliceTicket.objectId,
          arguments: { dry_run: true },
        }),
      );
      expect(preview).toMatchObject({
        dry_run: true,
        supports_real_dry_run: false,
        would_call: { class: 'SupportTicket', method: 'close', type: 'instance', args: {} },
      });
      expect((await row('SupportTicket', aliceTicket.objectId)).status).toBe('open');
    });

    it('refuses arguments the method does not accept, a globex order, and bad arguments', async () => {
      const extra = refused(
        await alice().execute('call_method', {
          class_name: 'Order',
          method_name: 'refund',
          object_id: acmeOrder.objectId,
          arguments: { reason: 'x long enough', status: 'refunded' },
        }),
      );
      expect(extra.error).toContain("'status'");
      const other = refused(
        await alice().execute('call_method', {
          class_name: 'Order',
          method_name: 'refund',
          object_id: globexOrder.objectId,
          arguments: { reason: 'damaged' },
        }),
      );
      expect(other.error).toContain('Object not found');
      const invalid = refused(
        await alice().execute('call_method', {
          class_name: 'Order',
          method_name: 'refund',
          object_id: acmeOrder.objectId,
          arguments: {},
        }),
      );
      expect(invalid.error_code).toBe('invalid_argument');
      expect((await row('Order', globexOrder.objectId)).status).toBe('paid');
    });

    it('applies the tier and the methods filter', async () => {
      const reader = alice({ permissions: 'readonly' });
      const tier = refused(
        await reader.execute('call_method', {
          class_name: 'Order',
          method_name: 'refund',
          object_id: acmeOrder.objectId,
          arguments: { reason: 'damaged' },
        }),
      );
      expect(tier.error_code).toBe('permission_denied');
      const filtered = alice({ methods: { except: ['Order.refund'] } });
      const result = refused(
        await filtered.execute('call_method', {
          class_name: 'Order',
          method_name: 'refund',
          object_id: acmeOrder.objectId,
          arguments: { reason: 'damaged' },
        }),
      );
      expect(result.error_code).toBe('tool_filtered');
      expect(
        filtered.wouldPermit('call_method', { className: 'Order', methodName: 'refund' }),
      ).toEqual({ allowed: false, reason: 'tool_filtered', denied_at: 'methods_filter' });
      expect(
        alice().wouldPermit('call_method', { className: 'Order', methodName: 'refund' }),
      ).toEqual({ allowed: true });
    });

    it('lists the methods an agent may call in get_schema, with the arguments call_method accepts', async () => {
      const schema = ok(await alice().execute('get_schema', { class_name: 'Order' }));
      expect(schema.agent_methods).toEqual([
        expect.objectContaining({ name: 'refund', permission: 'write', supports_dry_run: true }),
      ]);
      const [refund] = schema.agent_methods;
      expect(refund.permitted_keys).toEqual(['reason']);
      expect(Object.keys(refund.parameters.properties)).toEqual(['reason', 'dry_run']);
      expect(refund.parameters.additionalProperties).toBe(false);
      const reader = ok(
        await alice({ permissions: 'readonly' }).execute('get_schema', { class_name: 'Order' }),
      );
      expect(reader.agent_methods).toBeUndefined();
    });

    it('checks the class-level permission of an admin method against the session', async () => {
      const result = refused(
        await alice({ permissions: 'admin' }).execute('call_method', {
          class_name: 'Customer',
          method_name: 'anonymize',
          object_id: acmeCustomerId,
          arguments: { dry_run: true },
        }),
      );
      expect(result).toMatchObject({
        error_code: 'access_denied',
        details: { kind: 'clp_denied' },
      });
    });

    it('asks for confirmation before an admin method, and refuses when nobody can confirm', async () => {
      const carol = bed.factory.create({
        sessionToken: tokens.carol,
        tenantId: 'acme',
        permissions: 'admin',
      });
      const args = {
        class_name: 'Customer',
        method_name: 'anonymize',
        object_id: acmeCustomerId,
      };
      ok(await carol.execute('call_method', { ...args, arguments: { dry_run: true } }));
      const refusedCall = refused(await carol.execute('call_method', args));
      expect(refusedCall).toMatchObject({ details: { kind: 'confirmation_unavailable' } });
      expect((await row('Customer', acmeCustomerId)).name).not.toBe('Anonymized customer');

      const declined = refused(
        await carol.execute('call_method', args, {
          elicitation: { elicit: () => Promise.resolve({ action: 'decline' }) },
        }),
      );
      expect(declined).toMatchObject({ details: { kind: 'confirmation_declined' } });
      expect((await row('Customer', acmeCustomerId)).name).not.toBe('Anonymized customer');

      const asked: string[] = [];
      ok(
        await carol.execute('call_method', args, {
          elicitation: {
            elicit: (request) => {
              asked.push(request.message);
              return Promise.resolve({ action: 'accept', content: { confirm: true } });
            },
          },
        }),
      );
      expect(asked[0]).toContain('Customer.anonymize');
      expect((await row('Customer', acmeCustomerId)).name).toBe('Anonymized customer');
      expect(mutations.at(-1)).toMatchObject({ method: 'Customer.anonymize', confirmed: true });
    });

    it('refuses admin methods without PARSE_AGENT_ALLOW_SCHEMA_OPS', async () => {
      setGates(['PARSE_AGENT_ALLOW_WRITE_TOOLS']);
      const carol = bed.factory.create({ sessionToken: tokens.carol, permissions: 'admin' });
      const result = refused(
        await carol.execute('call_method', {
          class_name: 'Customer',
          method_name: 'anonymize',
          object_id: acmeCustomerId,
          arguments: { dry_run: true },
        }),
      );
      expect(result.error).toContain('PARSE_AGENT_ALLOW_SCHEMA_OPS=true');
    });
  });

  describe('destructive raw tools and schema tools (master key)', () => {
    it('deletes only after confirmation, and creates/deletes classes', async () => {
      const operator = bed.factory.create({ permissions: 'admin', confirmationRequired: false });
      const made = ok(
        await operator.execute('create_class', {
          class_name: 'AgentScratch',
          fields: { label: { type: 'String' } },
        }),
      );
      expect(made).toMatchObject({ class_name: 'AgentScratch', created: true });
      const created = ok(
        await operator.execute('create_object', {
          class_name: 'AgentScratch',
          values: { label: 'temp' },
        }),
      );
      const strict = bed.factory.create({ permissions: 'admin' });
      const refusedDelete = refused(
        await strict.execute('delete_object', {
          class_name: 'AgentScratch',
          object_id: created.object_id,
        }),
      );
      expect(refusedDelete.error).toContain('confirmationRequired: false');
      expect((await row('AgentScratch', created.object_id)).label).toBe('temp');
      ok(
        await operator.execute('delete_object', {
          class_name: 'AgentScratch',
          object_id: created.object_id,
        }),
      );
      await expect(row('AgentScratch', created.object_id)).rejects.toThrow();
      ok(await operator.execute('delete_class', { class_name: 'AgentScratch' }));
      expect(mutations.map((m) => m.action)).toEqual([
        'create_class',
        'create',
        'delete',
        'delete_class',
      ]);
    });
  });

  it('reports metadata gaps', async () => {
    const report = await bed.factory.auditMetadata();
    expect(report).toMatchObject({
      unresolvable_allowlist_entries: {},
      missing_tenant_fields: {},
    });
    expect(report.classes_audited).toBeGreaterThan(0);
    expect(Object.keys(report)).toEqual(
      expect.arrayContaining(['missing_class_descriptions', 'classes_without_model']),
    );
  });
});
