import type { ParseAgent } from 'nestjs-parse-agent';
import { CORE_MODELS } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { seedDemo } from '../harness/demo-data';
import { findRows, parseRest } from '../harness/parse-rest';

const GATES = ['PARSE_AGENT_ALLOW_WRITE_TOOLS', 'PARSE_AGENT_ALLOW_RAW_CRUD'] as const;

/**
 * A where value for a pointer column that is not a pointer to the column's class is refused with
 * `pointer_shape_mismatch` and the class expected, instead of reaching Parse and reading as an
 * honest empty answer (demo dataset, real Parse Server).
 */
describe('pointer_shape_mismatch (demo dataset)', () => {
  let bed: AgentTestBed;
  let master: ParseAgent;
  let writer: ParseAgent;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    const tokens = await seedDemo();
    bed = await createAgentTestBed(CORE_MODELS);
    master = bed.factory.create();
    writer = bed.factory.create({
      sessionToken: tokens.alice,
      tenantId: 'acme',
      permissions: 'write',
      allowMutations: true,
    });
    for (const g of GATES) {
      saved[g] = process.env[g];
      process.env[g] = 'true';
    }
  }, 60_000);

  afterAll(async () => {
    for (const g of GATES) {
      if (saved[g] === undefined) delete process.env[g];
      else process.env[g] = saved[g];
    }
    await bed.close();
  });

  it('answers a pointer to the right class, refuses another class or a malformed pointer', async () => {
    const one = ok(
      await master.execute('query_class', { class_name: 'Order', keys: ['customer'], limit: 1 }),
    );
    // Pointers come back as "Class$objectId".
    const customerId = ((one.results as Data[])[0].customer as string).split('$')[1];
    const full = { __type: 'Pointer', className: 'Customer', objectId: customerId };
    const right = ok(
      await master.execute('count_objects', { class_name: 'Order', where: { customer: full } }),
    );
    expect(right.count).toBeGreaterThan(0);

    const wrong: unknown[] = [
      { __type: 'Pointer', className: 'Product', objectId: customerId },
      `Product$${customerId}`,
      { objectId: customerId },
      { $in: [{ __type: 'Pointer', className: 'Customer' }] },
    ];
    for (const customer of wrong) {
      for (const tool of ['query_class', 'count_objects']) {
        const res = refused(
          await master.execute(tool, { class_name: 'Order', where: { customer } }),
        );
        expect(res.error_code).toBe('pointer_shape_mismatch');
        expect(res.details).toEqual({ field: 'customer', expected_class: 'Customer' });
        expect(res.error).toContain("'customer' is a pointer to Customer");
      }
    }
  });

  it('refuses a write of a pointer to another class or a malformed one, and writes nothing', async () => {
    // An order whose customer the writer can read: a soft-deleted customer is outside the
    // Customer canonical filter, and a pointer to it would be refused for that reason instead.
    const [order] = await findRows(
      'Order',
      {
        tenantId: 'acme',
        isDeleted: false,
        customer: { $inQuery: { className: 'Customer', where: { isDeleted: { $ne: true } } } },
      },
      { masterKey: true },
      { limit: '1' },
    );
    const before = (order.customer as Data).objectId as string;
    const [product] = await findRows('Product', {}, { masterKey: true }, { limit: '1' });
    for (const customer of [
      { __type: 'Pointer', className: 'Product', objectId: product.objectId },
      { __type: 'Pointer', className: 'Customer' },
      before,
      { objectId: before },
    ]) {
      const res = refused(
        await writer.execute('update_object', {
          class_name: 'Order',
          object_id: order.objectId,
          values: { customer },
        }),
      );
      expect(res.error_code).toBe('pointer_shape_mismatch');
      expect(res.details).toEqual({ field: 'customer', expected_class: 'Customer' });
    }
    const after = await parseRest<Data>('GET', `/classes/Order/${order.objectId}`, undefined, {
      masterKey: true,
    });
    expect(after.customer).toMatchObject({ className: 'Customer', objectId: before });
    // The right shape is written (the same customer, so the demo data is unchanged).
    ok(
      await writer.execute('update_object', {
        class_name: 'Order',
        object_id: order.objectId,
        values: { customer: { __type: 'Pointer', className: 'Customer', objectId: before } },
      }),
    );
  });
});
