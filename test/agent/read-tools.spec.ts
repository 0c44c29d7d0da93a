import type { ParseAgent, ToolCallEvent } from 'nestjs-parse-agent';
import { CORE_MODELS, SupportTicket } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { seedDemo } from '../harness/demo-data';
import { createObject, pointer } from '../harness/fixtures';
import { findRows } from '../harness/parse-rest';

/** Every key anywhere in a value, for "must never appear" checks. */
function allKeys(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => allKeys(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      allKeys(v, out);
    }
  }
  return out;
}

describe('read tools against a real Parse Server (demo dataset)', () => {
  let bed: AgentTestBed;
  let tokens: { alice: string; bob: string; carol: string };
  let master: ParseAgent;
  let alice: ParseAgent;
  let bob: ParseAgent;
  let events: ToolCallEvent[];
  let acmeOrderId: string;
  let globexOrderId: string;
  let deletedAcmeOrderId: string;

  beforeAll(async () => {
    tokens = await seedDemo();
    bed = await createAgentTestBed(CORE_MODELS);
    bed.metadata.register(SupportTicket);
    // A scratch class no model declares: opened by name, as an application would.
    bed.metadata.unhide('AgentProbe');
    events = [];
    bed.events.toolCalls$.subscribe((e) => events.push(e));
    master = bed.factory.create();
    alice = bed.factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
    bob = bed.factory.create({ sessionToken: tokens.bob, tenantId: 'globex' });
    const [a] = await findRows(
      'Order',
      { tenantId: 'acme', isDeleted: false },
      { masterKey: true },
      { limit: '1' },
    );
    const [g] = await findRows(
      'Order',
      { tenantId: 'globex', isDeleted: false },
      { masterKey: true },
      { limit: '1' },
    );
    const [d] = await findRows(
      'Order',
      { tenantId: 'acme', isDeleted: true },
      { masterKey: true },
      { limit: '1' },
    );
    acmeOrderId = a.objectId as string;
    globexOrderId = g.objectId as string;
    deletedAcmeOrderId = d.objectId as string;
  }, 60_000);

  afterAll(() => bed.close());

  describe('hidden classes', () => {
    it('never lists or serves the hidden class, nor Parse internals like _Session', async () => {
      const schemas = ok(await master.execute('get_all_schemas'));
      const names = [...schemas.custom, ...schemas.built_in].map((c: Data) => c.name);
      expect(names).toEqual(expect.arrayContaining(['Order', 'Customer', '_User']));
      expect(names).not.toContain('ApiCredential');
      expect(names).not.toContain('_Session');

      for (const [tool, args] of [
        ['query_class', { class_name: 'ApiCredential' }],
        ['count_objects', { class_name: 'ApiCredential' }],
        ['get_schema', { class_name: 'ApiCredential' }],
        ['get_sample_objects', { class_name: 'ApiCredential' }],
        ['query_class', { class_name: '_Session' }],
      ] as const) {
        const res = refused(await master.execute(tool, args));
        expect(res.error_code).toBe('access_denied');
        expect(res.details).toEqual({ kind: 'class_not_found' });
        expect(JSON.stringify(res)).not.toMatch(/sk_live|whsec/);
      }
    });

    it('applies names and prefix after hiding, so they cannot probe for hidden classes', async () => {
      const byName = ok(
        await master.execute('get_all_schemas', { names: ['ApiCredential', 'Order', '_Session'] }),
      );
      expect([...byName.custom, ...byName.built_in].map((c: Data) => c.name)).toEqual(['Order']);
      const byPrefix = ok(await master.execute('get_all_schemas', { prefix: 'Api' }));
      expect(byPrefix.total).toBe(0);
      const orders = ok(await master.execute('get_all_schemas', { prefix: 'Or' }));
      expect(orders.custom).toEqual([
        expect.objectContaining({ name: 'Order', desc: expect.any(String) }),
      ]);
    });

    it('refuses a hidden class reached through $inQuery', async () => {
      const res = refused(
        await master.execute('query_class', {
          class_name: 'Order',
          where: { tenantId: { $inQuery: { className: 'ApiCredential', where: {} } } },
        }),
      );
      expect(res.error_code).toBe('access_denied');
      expect(res.details?.kind).toBe('class_not_found');
    });

    it('redacts a pointer into a hidden class; text naming it is data, returned as stored', async () => {
      const [cred] = await findRows('ApiCredential', {}, { masterKey: true });
      await createObject('AgentProbe', {
        label: 'probe',
        cred: pointer('ApiCredential', cred.objectId as string),
        note: `ApiCredential$${cred.objectId as string}`,
        nested: { ref: `ApiCredential$${cred.objectId as string}` },
      });
      const data = ok(await master.execute('query_class', { class_name: 'AgentProbe' }));
      const [row] = data.results;
      expect(row.cred).toEqual({ className: 'ApiCredential', __redacted: true });
      // Only the schema's Pointer column is a pointer: a String or Object value is what was stored.
      expect(row.note).toBe(`ApiCredential$${cred.objectId as string}`);
      expect(row.nested.ref).toBe(`ApiCredential$${cred.objectId as string}`);

      const refusal = refused(
        await master.execute('query_class', { class_name: 'AgentProbe', include: ['cred'] }),
      );
      expect(refusal.details?.kind).toBe('class_not_found');

      const schema = ok(await master.execute('get_schema', { class_name: 'AgentProbe' }));
      const credField = schema.fields.find((f: Data) => f.name === 'cred');
      expect(credField.target_class).toBeUndefined();
      expect(credField.type).toBe('pointer (reference)');
      expect(credField.query_hint).not.toContain('ApiCredential');
    });
  });

  describe('field allowlists', () => {
    it('returns only allowlisted fields and refuses others in where, keys and order', async () => {
      const data = ok(await master.execute('query_class', { class_name: 'Customer', limit: 5 }));
      for (const row of data.results) {
        expect(row).not.toHaveProperty('phone');
        expect(row).not.toHaveProperty('isDeleted');
        expect(row).toHaveProperty('name');
      }
      for (const args of [
        { where: { phone: '+1-555-1000' } },
        { where: { $or: [{ phone: { $exists: true } }, { name: 'x' }] } },
        { keys: ['name', 'phone'] },
        { order: '-phone' },
      ]) {
        const res = refused(
          await master.execute('query_class', { class_name: 'Customer', ...args }),
        );
        expect(res.error_code).toBe('access_denied');
        expect(res.details).toMatchObject({ kind: 'field_denied', denied_field: 'phone' });
        expect(res.details?.allowed_fields).toContain('name');
      }
      const count = refused(
        await master.execute('count_objects', {
          class_name: 'Customer',
          where: { phone: { $exists: true } },
        }),
      );
      expect(count.details?.kind).toBe('field_denied');
    });

    it('projects joined rows to the target’s join fields and reports every field left out', async () => {
      const data = ok(
        await master.execute('query_class', {
          class_name: 'Order',
          keys: ['orderNumber', 'product', 'customer'],
          include: ['product', 'customer'],
          limit: 3,
        }),
      );
      // Every allowlisted field the join fields leave out, not only the large one.
      expect(data.truncated_include_fields).toEqual({
        product: ['tenantId', 'inStock', 'specSheet'],
        customer: ['tenantId', 'email', 'country', 'lifetimeValue'],
      });
      let joined = 0;
      for (const row of data.results) {
        expect(Object.keys(row.product).sort()).toEqual(
          expect.arrayContaining(['sku', 'name', 'category', 'price', 'objectId']),
        );
        expect(row.product).not.toHaveProperty('specSheet');
        if (typeof row.customer === 'string') {
          // Left a plain pointer: only a customer the canonical filter hides (soft-deleted).
          const [customer] = await findRows(
            'Customer',
            { objectId: row.customer.split('$')[1] },
            { masterKey: true },
          );
          expect(customer.isDeleted).toBe(true);
          continue;
        }
        joined += 1;
        expect(row.customer).not.toHaveProperty('phone');
        expect(row.customer).not.toHaveProperty('email');
        expect(row.customer).toHaveProperty('tier');
      }
      expect(joined).toBeGreaterThan(0);
    });

    it('never lets an include bypass the target class allowlist', async () => {
      const data = ok(
        await master.execute('query_class', {
          class_name: 'Order',
          include: ['customer'],
          limit: 3,
        }),
      );
      for (const row of data.results) {
        expect(row.customer).not.toHaveProperty('phone');
        expect(row.customer).not.toHaveProperty('isDeleted');
      }
    });
  });

  describe('tenant scope', () => {
    it('binds a tenant agent to its own rows', async () => {
      const data = ok(
        await alice.execute('query_class', {
          class_name: 'Order',
          limit: 1000,
          keys: ['tenantId'],
        }),
      );
      expect(data.result_count).toBeGreaterThan(200);
      expect(data.pagination.has_more).toBe(true);
      expect(data.next_call.arguments.skip).toBe(data.result_count);
      expect(data.results.every((r: Data) => r.tenantId === 'acme')).toBe(true);
      const count = ok(await alice.execute('count_objects', { class_name: 'Order' }));
      expect(count.count).toBe(1470);
      expect(count.constraints).toEqual({});
    });

    it('refuses attempts to name another tenant, in either spelling and inside $or', async () => {
      for (const where of [
        { tenantId: 'globex' },
        { tenant_id: 'globex' },
        { tenantId: { $in: ['acme', 'globex'] } },
        { $or: [{ tenantId: 'globex' }, { status: 'paid' }] },
      ]) {
        const res = refused(await alice.execute('query_class', { class_name: 'Order', where }));
        expect(res.error_code).toBe('access_denied');
        expect(res.details?.kind).toBe('tenant_scope');
      }
      // Naming its own tenant is fine.
      ok(
        await alice.execute('count_objects', { class_name: 'Order', where: { tenantId: 'acme' } }),
      );
    });

    it('answers another tenant’s object like a missing one, in get_object and get_objects', async () => {
      // The demo's rows carry per-tenant ACLs, so Parse itself refuses alice a globex row before
      // the tenant scope looks at it: the answer is the one for an object that does not exist.
      const res = refused(
        await alice.execute('get_object', { class_name: 'Order', object_id: globexOrderId }),
      );
      const missing = refused(
        await alice.execute('get_object', { class_name: 'Order', object_id: 'zzzzzzzzzz' }),
      );
      expect(res.error_code).toBe(missing.error_code);
      expect(res.error.replace(globexOrderId, '<id>')).toBe(
        missing.error.replace('zzzzzzzzzz', '<id>'),
      );
      expect(JSON.stringify(res)).not.toContain('GLOBEX');
      // Same in get_objects: the globex id is reported missing, like an id that does not exist.
      const many = ok(
        await alice.execute('get_objects', {
          class_name: 'Order',
          ids: [acmeOrderId, globexOrderId, 'zzzzzzzzzz'],
        }),
      );
      expect(Object.keys(many.objects)).toEqual([acmeOrderId]);
      expect(many.missing).toEqual([globexOrderId, 'zzzzzzzzzz']);
      expect(JSON.stringify(many)).not.toContain('GLOBEX');
      // carol (admin) may read globex rows through Parse; bound to acme, the tenant scope refuses.
      const carol = bed.factory.create({ sessionToken: tokens.carol, tenantId: 'acme' });
      const scoped = refused(
        await carol.execute('get_object', { class_name: 'Order', object_id: globexOrderId }),
      );
      expect(scoped.error_code).toBe('access_denied');
      expect(JSON.stringify(scoped)).not.toContain('GLOBEX');
      const scopedMany = refused(
        await carol.execute('get_objects', {
          class_name: 'Order',
          ids: [acmeOrderId, globexOrderId],
        }),
      );
      expect(scopedMany.error_code).toBe('access_denied');
      ok(await alice.execute('get_object', { class_name: 'Order', object_id: acmeOrderId }));
    });

    it('refuses an agent with no tenant binding (fail closed), while the operator bypass reads all', async () => {
      const unbound = bed.factory.create({ sessionToken: tokens.alice });
      const res = refused(await unbound.execute('count_objects', { class_name: 'Order' }));
      expect(res.details?.kind).toBe('tenant_scope');
      const all = ok(await master.execute('count_objects', { class_name: 'Order' }));
      expect(all.count).toBe(2940);
    });
  });

  describe('canonical filter (soft-deleted rows)', () => {
    it('hides soft-deleted rows unless the caller opts out', async () => {
      const visible = ok(await master.execute('count_objects', { class_name: 'Order' }));
      const withDeleted = ok(
        await master.execute('count_objects', {
          class_name: 'Order',
          apply_canonical_filter: false,
        }),
      );
      expect(visible.count).toBe(2940);
      expect(withDeleted.count).toBe(3000);
      const rows = ok(
        await master.execute('query_class', {
          class_name: 'Order',
          where: { orderNumber: { $exists: true } },
          limit: 1000,
          skip: 1000,
          keys: ['orderNumber'],
        }),
      );
      // A full page of 1000 came back (more than the byte budget shows at once).
      expect(rows.pagination.has_more).toBe(true);
      expect(rows.truncated).toBe(true);
      expect(rows.next_call.arguments.skip).toBe(1000 + rows.result_count);
    });

    it('answers a soft-deleted object exactly like a missing one', async () => {
      const deleted = refused(
        await master.execute('get_object', { class_name: 'Order', object_id: deletedAcmeOrderId }),
      );
      const missing = refused(
        await master.execute('get_object', { class_name: 'Order', object_id: 'zzzzzzzzzz' }),
      );
      expect(deleted.error_code).toBe('not_found');
      expect(missing.error_code).toBe('not_found');
      expect(missing.error).toBe('Object not found: Order#zzzzzzzzzz');
      expect(deleted.error.replace(deletedAcmeOrderId, 'ID')).toBe(
        missing.error.replace('zzzzzzzzzz', 'ID'),
      );
      const optOut = ok(
        await master.execute('get_object', {
          class_name: 'Order',
          object_id: deletedAcmeOrderId,
          apply_canonical_filter: false,
        }),
      );
      expect(optOut.object_id).toBe(deletedAcmeOrderId);
    });
  });

  describe('ACLs through the session token', () => {
    it('shows alice her private tickets and hides them from the admin and from bob', async () => {
      const asAlice = ok(
        await alice.execute('query_class', {
          class_name: 'SupportTicket',
          limit: 100,
          keys: ['subject'],
        }),
      );
      const carol = bed.factory.create({ sessionToken: tokens.carol, tenantId: 'acme' });
      const asCarol = ok(
        await carol.execute('query_class', {
          class_name: 'SupportTicket',
          limit: 100,
          keys: ['subject'],
        }),
      );
      const asBob = ok(
        await bob.execute('query_class', {
          class_name: 'SupportTicket',
          limit: 100,
          keys: ['tenantId'],
        }),
      );
      const aliceIds = new Set(asAlice.results.map((r: Data) => r.objectId));
      const carolIds = new Set(asCarol.results.map((r: Data) => r.objectId));
      expect(asAlice.result_count).toBe(24);
      expect(asCarol.result_count).toBe(27);
      const alicePrivate = [...aliceIds].filter((id) => !carolIds.has(id));
      expect(alicePrivate).toHaveLength(3);
      expect(asBob.results.every((r: Data) => r.tenantId === 'globex')).toBe(true);
      const bobIds = new Set(asBob.results.map((r: Data) => r.objectId));
      for (const id of alicePrivate) expect(bobIds.has(id)).toBe(false);
      const direct = refused(
        await bob.execute('get_object', {
          class_name: 'SupportTicket',
          object_id: alicePrivate[0] as string,
        }),
      );
      expect(direct.error_code).toBe('not_found');
    });

    it('lets Parse strip protectedFields for a session agent', async () => {
      const data = ok(await alice.execute('query_class', { class_name: 'Customer', limit: 5 }));
      for (const row of data.results) expect(row).not.toHaveProperty('email');
      const asMaster = ok(
        await master.execute('query_class', { class_name: 'Customer', limit: 5 }),
      );
      expect(asMaster.results[0]).toHaveProperty('email');
    });
  });

  describe('internal fields', () => {
    it('refuses them in where and keys and never returns them', async () => {
      const where = refused(
        await master.execute('query_class', {
          class_name: '_User',
          where: { _hashed_password: { $exists: true } },
        }),
      );
      expect(where.error_code).toBe('security_blocked');
      const keys = refused(
        await master.execute('query_class', { class_name: '_User', keys: ['sessionToken'] }),
      );
      expect(keys.error_code).toBe('access_denied');
      expect(keys.details).toMatchObject({ kind: 'internal_field', denied_field: 'sessionToken' });
      const authData = refused(
        await master.execute('query_class', {
          class_name: '_User',
          where: { authData: { $exists: true } },
        }),
      );
      expect(authData.error_code).toBe('security_blocked');
      const users = ok(await master.execute('query_class', { class_name: '_User' }));
      expect(users.result_count).toBe(3);
      const keysSeen = allKeys(users);
      for (const k of [
        'sessionToken',
        '_hashed_password',
        'authData',
        '_rperm',
        '_wperm',
        'ACL',
        'email',
      ]) {
        expect(keysSeen.has(k)).toBe(false);
      }
    });
  });

  describe('query_class', () => {
    it('defaults to 100 rows, clamps to 1000, shows what fits the byte budget and points at the next page', async () => {
      const data = ok(
        await master.execute('query_class', { class_name: 'Order', order: 'orderNumber' }),
      );
      const shown = data.result_count as number;
      expect(shown).toBeGreaterThan(50);
      expect(shown).toBeLessThan(100);
      expect(data.results).toHaveLength(shown);
      expect(JSON.stringify(data.results).length).toBeLessThanOrEqual(32 * 1024);
      expect(data.pagination).toEqual({ limit: 100, skip: 0, has_more: true });
      expect(data.truncated).toBe(true);
      expect(data.next_call).toEqual({
        tool: 'query_class',
        arguments: { class_name: 'Order', limit: 100, skip: shown, order: 'orderNumber' },
      });
      // The next page starts right after the last row shown: nothing skipped, nothing repeated.
      const next = ok(await master.execute('query_class', data.next_call.arguments));
      const numbers = [...data.results, ...next.results].map((r: Data) => r.orderNumber);
      expect(new Set(numbers).size).toBe(numbers.length);
      expect(next.results[0].orderNumber > data.results[shown - 1].orderNumber).toBe(true);
      const big = ok(
        await master.execute('query_class', { class_name: 'Order', limit: 5000, keys: ['total'] }),
      );
      expect(big.pagination.limit).toBe(1000);
      const last = ok(await master.execute('query_class', { class_name: 'Tenant' }));
      expect(last.pagination.has_more).toBe(false);
      expect(last).not.toHaveProperty('next_call');
    });

    it('normalizes bare pointer ids, $in lists and ISO dates', async () => {
      const [order] = await findRows('Order', { objectId: acmeOrderId }, { masterKey: true });
      const customerId = (order.customer as Data).objectId;
      const byId = ok(
        await master.execute('query_class', {
          class_name: 'Order',
          where: { customer: customerId },
          limit: 1000,
          keys: ['customer'],
        }),
      );
      expect(byId.result_count).toBeGreaterThan(0);
      expect(byId.results.every((r: Data) => r.customer === `Customer$${customerId}`)).toBe(true);
      const byIn = ok(
        await master.execute('count_objects', {
          class_name: 'Order',
          where: { customer: { $in: [customerId] } },
        }),
      );
      expect(byIn.count).toBe(byId.result_count);
      const byStorage = ok(
        await master.execute('count_objects', {
          class_name: 'Order',
          where: { customer: `Customer$${customerId}` },
        }),
      );
      expect(byStorage.count).toBe(byId.result_count);
      const recent = ok(
        await master.execute('count_objects', {
          class_name: 'Order',
          where: { placedAt: { $gte: '2026-01-01T00:00:00Z' } },
        }),
      );
      const older = ok(
        await master.execute('count_objects', {
          class_name: 'Order',
          where: { placedAt: { $lt: '2026-01-01' } },
        }),
      );
      expect(recent.count).toBeGreaterThan(0);
      expect(recent.count + older.count).toBe(2940);
      const bad = refused(
        await master.execute('count_objects', {
          class_name: 'Order',
          where: { placedAt: { $gte: 'yesterday' } },
        }),
      );
      expect(bad.error_code).toBe('invalid_argument');
    });

    it('renders csv, markdown and table, and refuses an unknown format', async () => {
      const csv = ok(
        await master.execute('query_class', {
          class_name: 'Tenant',
          format: 'csv',
          keys: ['slug', 'name'],
          order: 'slug',
        }),
      );
      expect(csv.headers).toEqual(expect.arrayContaining(['slug', 'name', 'objectId']));
      expect(csv.headers).not.toContain('ACL');
      expect(csv.output).toMatch(/acme,Acme Outfitters/);
      const md = ok(
        await master.execute('query_class', {
          class_name: 'Tenant',
          format: 'markdown',
          keys: ['slug'],
        }),
      );
      expect(md.output).toContain('| --- |');
      const table = ok(
        await master.execute('query_class', {
          class_name: 'Tenant',
          format: 'TABLE',
          keys: ['slug'],
        }),
      );
      expect(table.output).toMatch(/^\+-+/);
      const bad = refused(
        await master.execute('query_class', { class_name: 'Tenant', format: 'xml' }),
      );
      expect(bad.error_code).toBe('invalid_argument');
    });

    it('refuses unknown and code-executing operators as invalid_query', async () => {
      for (const where of [
        { total: { $foo: 1 } },
        { $where: 'this.total > 1' },
        { total: { $function: {} } },
        { $expr: { $gt: ['$total', 1] } },
      ]) {
        const res = refused(await master.execute('query_class', { class_name: 'Order', where }));
        expect(res.error_code).toBe('invalid_query');
      }
    });
  });

  describe('get_objects and get_sample_objects', () => {
    it('dedupes ids, keys results by id, lists missing ones and caps at 50', async () => {
      const data = ok(
        await master.execute('get_objects', {
          class_name: 'Order',
          ids: [acmeOrderId, acmeOrderId, 'missing123', deletedAcmeOrderId],
        }),
      );
      expect(data.requested).toBe(3);
      expect(Object.keys(data.objects)).toEqual([acmeOrderId]);
      expect(data.missing).toEqual(['missing123', deletedAcmeOrderId]);
      const tooMany = refused(
        await master.execute('get_objects', {
          class_name: 'Order',
          ids: Array.from({ length: 51 }, (_, i) => `id${i}`),
        }),
      );
      expect(tooMany.error_code).toBe('invalid_argument');
      const empty = ok(await master.execute('get_objects', { class_name: 'Order', ids: [] }));
      expect(empty).toMatchObject({ requested: 0, found: 0, missing: [] });
    });

    it('samples the newest rows of the agent’s tenant only', async () => {
      const data = ok(await bob.execute('get_sample_objects', { class_name: 'Order', limit: 50 }));
      expect(data.sample_count).toBe(20);
      expect(data.samples.every((r: Data) => r.tenantId === 'globex')).toBe(true);
    });
  });

  describe('get_schema', () => {
    it('documents fields, allowed values, large fields, pointers and relations', async () => {
      const schema = ok(await master.execute('get_schema', { class_name: 'Order' }));
      const field = (name: string) => schema.fields.find((f: Data) => f.name === name);
      expect(field('status').allowed_values).toContainEqual({
        value: 'paid',
        description: 'Paid, waiting to ship',
      });
      expect(field('customer')).toMatchObject({
        target_class: 'Customer',
        type: 'pointer (reference) → Customer',
      });
      expect(field('customer').query_hint).toContain('"customer"');
      expect(field('isDeleted')).toBeUndefined();
      expect(schema.canonical_filter).toEqual({ isDeleted: { $ne: true } });
      expect(schema.agent_fields).toContain('orderNumber');
      expect(schema.relations.outgoing).toEqual([]);
      expect(schema.relations.incoming).toEqual(
        expect.arrayContaining([
          { from: 'Customer', to: 'Order', via: 'Order.customer', cardinality: '1:N' },
        ]),
      );
      const product = ok(await master.execute('get_schema', { class_name: 'Product' }));
      expect(product.fields.find((f: Data) => f.name === 'specSheet').large_field).toBe(true);
      expect(product.agent_join_fields).toEqual(['sku', 'name', 'category', 'price']);
      const typo = refused(await master.execute('get_schema', { class_name: 'Ordr' }));
      expect(typo.error).toContain("Did you mean 'Order'?");
      expect(typo.error).not.toContain('ApiCredential');
    });
  });

  describe('per-agent configuration', () => {
    it('applies class, tool and row filters', async () => {
      const scoped = bed.factory.create({
        classes: { only: ['Order', 'Tenant'] },
        tools: { except: ['get_sample_objects'] },
        filters: { Order: { status: 'paid' }, default: { createdAt: { $exists: true } } },
      });
      const cls = refused(await scoped.execute('query_class', { class_name: 'Customer' }));
      expect(cls.details).toEqual({ kind: 'class_filter' });
      const inc = refused(
        await scoped.execute('query_class', { class_name: 'Order', include: ['customer'] }),
      );
      expect(inc.details?.kind).toBe('class_filter');
      const tool = refused(await scoped.execute('get_sample_objects', { class_name: 'Order' }));
      expect(tool.error_code).toBe('tool_filtered');
      expect(scoped.allowedTools()).not.toContain('get_sample_objects');
      const rows = ok(
        await scoped.execute('query_class', { class_name: 'Order', limit: 200, keys: ['status'] }),
      );
      expect(rows.results.every((r: Data) => r.status === 'paid')).toBe(true);
      const schemas = ok(await scoped.execute('get_all_schemas'));
      expect(schemas.custom.map((c: Data) => c.name).sort()).toEqual(['Order', 'Tenant']);
      const write = refused(await scoped.execute('create_object', { class_name: 'Order' }));
      expect(write.error_code).toBe('permission_denied');
      const unknown = refused(await scoped.execute('no_such_tool', {}));
      expect(unknown.error_code).toBe('unknown_tool');
    });

    it('emits tool-call events without argument or filter values', async () => {
      events.length = 0;
      const scoped = bed.factory.create({
        filters: { Order: { status: 'paid' } },
        correlationId: 'req-42',
      });
      ok(await scoped.execute('count_objects', { class_name: 'Order', where: { channel: 'web' } }));
      expect(events).toHaveLength(1);
      const [event] = events;
      expect(event).toMatchObject({
        tool: 'count_objects',
        args_keys: ['class_name'],
        auth_type: 'master_key',
        using_master_key: true,
        permissions: 'readonly',
        success: true,
        correlation_id: 'req-42',
        filters: { Order: ['status'] },
      });
      expect(JSON.stringify(event)).not.toContain('paid');
      expect(JSON.stringify(event)).not.toContain('web');
    });
  });
});
