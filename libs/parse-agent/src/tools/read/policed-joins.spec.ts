/**
 * Joins (`include`) through the policed reader, on generated data: two tenants, soft-deleted and
 * filtered-out rows, dangling pointers, arrays of pointers, pointers into a hidden class, nested
 * includes. Every joined object a tool returns is compared with an oracle computed from the rows
 * themselves (the joined class's tenant scope, canonical filter and the agent's filter), and
 * every pointer the oracle says is readable must be joined. Row ACL, CLP and protectedFields are
 * not modelled by the in-memory path: test/agent/include-policy.spec.ts checks those on a real
 * Parse Server and PostgreSQL.
 */
import 'reflect-metadata';
import { inMemoryAgentServices } from '../../../../../test/fixtures/in-memory-agent';
import { ParseAgent } from '../../agent/parse-agent';
import { suppressSecurityBanners } from '../../core/security-banner';
import { AgentCanonicalFilter } from '../../metadata/decorators/agent-canonical-filter.decorator';
import { AgentFields, AgentJoinFields } from '../../metadata/decorators/agent-fields.decorators';
import { AgentHidden } from '../../metadata/decorators/agent-hidden.decorator';
import { AgentTenantScope } from '../../metadata/decorators/agent-tenant-scope.decorator';
import { ParseClass } from '../../metadata/decorators/parse-class.decorator';
import type { DataRow } from '../../ports/data-path';

@ParseClass('Customer')
@AgentFields('tenantId', 'name', 'email', 'tier')
@AgentJoinFields('name', 'tier')
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId')
class Customer {}

@ParseClass('Order')
@AgentFields('tenantId', 'number', 'customer', 'customers', 'vault')
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId')
class Order {}

@ParseClass('Ticket')
@AgentFields('tenantId', 'subject', 'order')
@AgentTenantScope('tenantId')
class Ticket {}

@ParseClass('Vault')
@AgentHidden()
class Vault {}

const SCHEMAS = {
  Customer: {
    tenantId: 'String',
    name: 'String',
    email: 'String',
    tier: 'String',
    secret: 'String',
    isDeleted: 'Boolean',
  },
  Order: {
    tenantId: 'String',
    number: 'String',
    customer: { type: 'Pointer', targetClass: 'Customer' },
    customers: 'Array',
    vault: { type: 'Pointer', targetClass: 'Vault' },
    isDeleted: 'Boolean',
  },
  Ticket: {
    tenantId: 'String',
    subject: 'String',
    order: { type: 'Pointer', targetClass: 'Order' },
  },
  Vault: { code: 'String' },
};

/** Fields a joined row of each class may show: its allowlist and the fields every row has. */
const SHOWN: Record<string, string[]> = {
  Customer: ['tenantId', 'name', 'email', 'tier'],
  Order: ['tenantId', 'number', 'customer', 'customers', 'vault'],
};
const ALWAYS = ['objectId', 'createdAt', 'updatedAt', 'className'];

const ptr = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface World {
  rows: Record<string, DataRow[]>;
  /** Whether a direct read of the class by the acme agent returns the object (the oracle). */
  visible(className: string, objectId: string): boolean;
  source(className: string, objectId: string): DataRow | undefined;
}

function world(seed: number, customers = 40, orders = 60, tickets = 40): World {
  const rand = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
  const created = new Date(Date.UTC(2024, 0, 1)).toISOString();
  const customerRows: DataRow[] = Array.from({ length: customers }, (_, i) => ({
    objectId: `c${i}`,
    createdAt: created,
    tenantId: pick(['acme', 'acme', 'globex']),
    name: `NAME-c${i}-`,
    email: `c${i}@MAIL-`,
    tier: pick(['gold', 'silver', 'blocked']),
    secret: `SECRET-c${i}-`,
    isDeleted: rand() < 0.2,
  }));
  const someCustomer = () =>
    rand() < 0.08
      ? ptr('Customer', `gone${Math.floor(rand() * 5)}`)
      : ptr('Customer', pick(customerRows).objectId as string);
  const orderRows: DataRow[] = Array.from({ length: orders }, (_, i) => ({
    objectId: `o${i}`,
    createdAt: created,
    tenantId: pick(['acme', 'acme', 'globex']),
    number: `NUM-o${i}-`,
    customer: someCustomer(),
    customers: Array.from({ length: Math.floor(rand() * 5) }, () =>
      rand() < 0.15 ? ptr('Vault', 'v1') : someCustomer(),
    ),
    vault: ptr('Vault', 'v1'),
    isDeleted: rand() < 0.15,
  }));
  const ticketRows: DataRow[] = Array.from({ length: tickets }, (_, i) => ({
    objectId: `t${i}`,
    createdAt: created,
    tenantId: pick(['acme', 'acme', 'globex']),
    subject: `SUBJ-t${i}-`,
    order: ptr('Order', rand() < 0.05 ? 'gone' : (pick(orderRows).objectId as string)),
  }));
  const rows = {
    Customer: customerRows,
    Order: orderRows,
    Ticket: ticketRows,
    Vault: [{ objectId: 'v1', code: 'VAULT-CODE' }],
  };
  const source = (className: string, objectId: string) =>
    (rows as Record<string, DataRow[]>)[className]?.find((r) => r.objectId === objectId);
  return {
    rows,
    source,
    visible(className, objectId) {
      const row = source(className, objectId);
      if (!row || row.tenantId !== 'acme') return false;
      if (className === 'Customer') return row.isDeleted !== true && row.tier !== 'blocked';
      if (className === 'Order') return row.isDeleted !== true;
      return className === 'Ticket';
    },
  };
}

function agentIn(w: World): ParseAgent {
  const { services } = inMemoryAgentServices({
    schemas: SCHEMAS,
    rows: w.rows,
    models: [Customer, Order, Ticket, Vault],
  });
  return new ParseAgent(
    { tenantId: 'acme', filters: { Customer: { tier: { $ne: 'blocked' } } } },
    services,
  );
}

const POINTER_STRING = /^([A-Za-z_]\w*)\$(.+)$/;

/** The values at an include path of a result row (`order.customer` goes through joined orders). */
function valuesAt(row: unknown, path: string): unknown[] {
  let current: unknown[] = [row];
  for (const segment of path.split('.')) {
    const next: unknown[] = [];
    for (const value of current) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
      const v = (value as Record<string, unknown>)[segment];
      if (Array.isArray(v)) next.push(...v);
      else if (v !== undefined) next.push(v);
    }
    current = next;
  }
  return current;
}

/** Rows of a tool result, whatever its shape. */
function resultRows(data: Record<string, unknown>): unknown[] {
  if (Array.isArray(data.results)) return data.results;
  if (data.object) return [data.object];
  if (data.objects) return Object.values(data.objects as object);
  return [];
}

/**
 * Checks one result against the oracle: each value at an include path is either a joined object
 * the oracle says is visible (with no field its class would not show, and the stored values), a
 * bare pointer the oracle says is not visible, or a redacted pointer into the hidden class; and
 * withheld_includes counts exactly the bare pointers shown.
 */
function checkJoins(
  w: World,
  data: Record<string, unknown>,
  include: string[],
): { joined: number; bare: number } {
  let joined = 0;
  let bareCount = 0;
  const withheld = (data.withheld_includes ?? {}) as Record<string, number>;
  const paths = new Set<string>();
  for (const path of include) {
    const parts = path.split('.');
    for (let i = 1; i <= parts.length; i++) paths.add(parts.slice(0, i).join('.'));
  }
  for (const path of paths) {
    const bare = new Set<string>();
    for (const row of resultRows(data)) {
      for (const value of valuesAt(row, path)) {
        if (typeof value === 'string') {
          const m = POINTER_STRING.exec(value);
          expect(m).not.toBeNull();
          expect({ path, value, visible: w.visible(m![1], m![2]) }).toEqual({
            path,
            value,
            visible: false,
          });
          bare.add(value);
          continue;
        }
        const object = value as Record<string, unknown>;
        if (object.__redacted) {
          expect(object.className).toBe('Vault');
          continue;
        }
        const className = String(object.className);
        const id = String(object.objectId);
        expect({ path, className, id, visible: w.visible(className, id) }).toEqual({
          path,
          className,
          id,
          visible: true,
        });
        const allowed = new Set([...SHOWN[className], ...ALWAYS]);
        expect(Object.keys(object).filter((k) => !allowed.has(k))).toEqual([]);
        const stored = w.source(className, id)!;
        for (const key of ['name', 'email', 'tier', 'number', 'tenantId']) {
          if (key in object) expect(object[key]).toEqual(stored[key]);
        }
        joined += 1;
      }
    }
    if (!data.truncated) {
      expect({ path, withheld: withheld[path] ?? 0 }).toEqual({ path, withheld: bare.size });
    }
    bareCount += bare.size;
  }
  if (Object.keys(withheld).length) expect(data.withheld_includes_note).toEqual(expect.any(String));
  else expect(data).not.toHaveProperty('withheld_includes_note');
  // What no read of this agent returns never appears, in any field or format.
  const text = JSON.stringify(data);
  for (const c of w.rows.Customer) {
    expect(text).not.toContain(String(c.secret));
    if (!w.visible('Customer', String(c.objectId))) {
      expect(text).not.toContain(String(c.name));
      expect(text).not.toContain(String(c.email));
    }
  }
  expect(text).not.toContain('VAULT-CODE');
  expect(text).not.toContain('isDeleted');
  return { joined, bare: bareCount };
}

beforeAll(() => suppressSecurityBanners());

describe('joins through the policed reader (generated data, in-memory path)', () => {
  const shapes: Array<[string, Record<string, unknown>, string[]]> = [
    ['query_class', { class_name: 'Order', include: ['customer'], limit: 1000 }, ['customer']],
    [
      'query_class',
      { class_name: 'Order', include: ['customer', 'customers'], limit: 1000 },
      ['customer', 'customers'],
    ],
    [
      'query_class',
      { class_name: 'Order', include: ['customer'], keys: ['number', 'customer'], limit: 1000 },
      ['customer'],
    ],
    [
      'query_class',
      {
        class_name: 'Order',
        include: ['customer'],
        keys: ['number', 'customer.name', 'customer.secret', 'customer.email'],
        limit: 1000,
      },
      ['customer'],
    ],
    [
      'query_class',
      { class_name: 'Ticket', include: ['order.customer'], limit: 1000 },
      ['order.customer'],
    ],
    [
      'query_class',
      {
        class_name: 'Ticket',
        include: ['order', 'order.customer', 'order.customers'],
        keys: ['subject', 'order.number', 'order.customer.name', 'order.customers'],
        limit: 1000,
      },
      ['order.customer', 'order.customers'],
    ],
  ];

  for (const seed of [1, 2, 3, 4, 5, 6]) {
    describe(`seed ${seed}`, () => {
      const w = world(seed);
      const agent = agentIn(w);

      it.each(shapes.map((s, i) => [i, ...s] as const))(
        'shape %i: %s joins only what a direct read returns, and all of it',
        async (_i, tool, args, include) => {
          const result = await agent.execute(tool, args);
          expect(result).toMatchObject({ success: true });
          const data = (result as { data: Record<string, unknown> }).data;
          expect(data.truncated).toBe(false);
          const { joined, bare } = checkJoins(w, data, include);
          // Generated data always holds both: the checks above are not vacuous.
          expect(joined).toBeGreaterThan(0);
          expect(bare).toBeGreaterThan(0);
        },
      );

      it('get_object and get_objects join the same way', async () => {
        const visibleOrders = w.rows.Order.filter((o) =>
          w.visible('Order', String(o.objectId)),
        ).map((o) => String(o.objectId));
        let joined = 0;
        for (const id of visibleOrders.slice(0, 15)) {
          const one = await agent.execute('get_object', {
            class_name: 'Order',
            object_id: id,
            include: ['customer', 'customers'],
          });
          expect(one).toMatchObject({ success: true });
          joined += checkJoins(w, (one as { data: Record<string, unknown> }).data, [
            'customer',
            'customers',
          ]).joined;
        }
        const many = await agent.execute('get_objects', {
          class_name: 'Order',
          ids: visibleOrders.slice(0, 50),
          include: ['customer', 'customers'],
        });
        expect(many).toMatchObject({ success: true });
        joined += checkJoins(w, (many as { data: Record<string, unknown> }).data, [
          'customer',
          'customers',
        ]).joined;
        const tickets = w.rows.Ticket.filter((t) => t.tenantId === 'acme').slice(0, 10);
        for (const t of tickets) {
          const one = await agent.execute('get_object', {
            class_name: 'Ticket',
            object_id: String(t.objectId),
            include: ['order.customer'],
          });
          expect(one).toMatchObject({ success: true });
          joined += checkJoins(w, (one as { data: Record<string, unknown> }).data, [
            'order.customer',
          ]).joined;
        }
        expect(joined).toBeGreaterThan(0);
      });

      it('export_data shows no column value of an object the agent cannot read', async () => {
        const result = await agent.execute('export_data', {
          class_name: 'Order',
          include: ['customer'],
          columns: ['number', 'customer.name', 'customer.email'],
          row_cap: 1000,
        });
        expect(result).toMatchObject({ success: true });
        const data = (result as { data: Record<string, unknown> }).data;
        const output = String(data.output);
        for (const c of w.rows.Customer) {
          if (!w.visible('Customer', String(c.objectId))) {
            expect(output).not.toContain(String(c.name));
          }
        }
        // Every visible customer an acme order points to is exported.
        const expected = w.rows.Order.filter((o) => w.visible('Order', String(o.objectId)))
          .map((o) => (o.customer as { objectId: string }).objectId)
          .filter((id) => w.visible('Customer', id));
        for (const id of expected) expect(output).toContain(String(w.source('Customer', id)!.name));
        if (expected.length < w.rows.Order.length) {
          expect(data.withheld_includes_note).toEqual(expect.any(String));
        }
      });
    });
  }

  it('never asks a data path to expand an include, and reads each joined class with its own scope', async () => {
    const w = world(7);
    const { services, calls } = inMemoryAgentServices({
      schemas: SCHEMAS,
      rows: w.rows,
      models: [Customer, Order, Ticket, Vault],
    });
    const agent = new ParseAgent(
      { tenantId: 'acme', filters: { Customer: { tier: { $ne: 'blocked' } } } },
      services,
    );
    await agent.execute('query_class', {
      class_name: 'Ticket',
      include: ['order.customer', 'order.customers'],
    });
    const finds = calls.filter((c) => c.operation === 'find');
    for (const call of finds)
      expect((call.detail as { include?: unknown }).include).toBeUndefined();
    const byClass = new Map(finds.map((c) => [c.className, JSON.stringify(c.detail)]));
    expect([...byClass.keys()].sort()).toEqual(['Customer', 'Order', 'Ticket']);
    expect(byClass.get('Customer')).toContain('"tenantId":"acme"');
    expect(byClass.get('Customer')).toContain('"isDeleted":{"$ne":true}');
    expect(byClass.get('Customer')).toContain('"tier":{"$ne":"blocked"}');
    expect(byClass.get('Order')).toContain('"isDeleted":{"$ne":true}');
    // The hidden class is never read: its pointers are redacted.
    expect(finds.some((c) => c.className === 'Vault')).toBe(false);
  });

  it('joins more pointers than one read names, in slices', async () => {
    const w = world(8, 1200, 1, 1);
    // 1200 acme orders, each pointing to its own customer.
    w.rows.Order = w.rows.Customer.map((c, i) => ({
      objectId: `o${i}`,
      tenantId: 'acme',
      number: `N${i}`,
      customer: ptr('Customer', String(c.objectId)),
      customers: [],
    }));
    const { services, calls } = inMemoryAgentServices({
      schemas: SCHEMAS,
      rows: w.rows,
      models: [Customer, Order, Ticket, Vault],
    });
    const agent = new ParseAgent(
      { tenantId: 'acme', filters: { Customer: { tier: { $ne: 'blocked' } } } },
      services,
    );
    const result = await agent.execute('export_data', {
      class_name: 'Order',
      include: ['customer'],
      columns: ['number', 'customer.name'],
      row_cap: 1200,
    });
    expect(result).toMatchObject({ success: true });
    const customerReads = calls.filter((c) => c.operation === 'find' && c.className === 'Customer');
    expect(customerReads.length).toBe(3);
    const output = String((result as { data: { output: string } }).data.output);
    const visible = w.rows.Customer.filter((c) => w.visible('Customer', String(c.objectId)));
    expect(visible.length).toBeGreaterThan(100);
    for (const c of visible) expect(output).toContain(`${String(c.name)}\n`.slice(0, -1));
  });
});
