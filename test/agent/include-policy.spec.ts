import {
  AgentCanonicalFilter,
  AgentFields,
  AgentMethod,
  AgentTenantScope,
  AgentVisible,
  ParseClass,
  type AgentMethodContext,
  type DataPathProvider,
  type ParseAgent,
  type PolicedToolContext,
  type ToolEnvelope,
  type ToolRegistry,
} from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import type { Data } from '../harness/envelopes';
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  pointer,
  type Acl,
} from '../harness/fixtures';
import { findRows, parseRest, testParseConfig, type RestAuth } from '../harness/parse-rest';

/**
 * A joined row passes the same read policy as a direct read of its class, and a write never links
 * a row the agent could not read: on a real Parse Server and a real PostgreSQL, for every kind of
 * identity (master key bound to a tenant, session token, aclUser, aclRole) and every path (Parse
 * REST where it serves the identity, the direct PostgreSQL path for all of them).
 *
 * Two tenants' customers are seeded with every reason a row can be unreadable: another tenant with
 * a public ACL (only the tenant scope stops it), another tenant with its own ACL, soft-deleted (the
 * canonical filter), outside the agent's `filters`, an ACL no acme staff member is in, and an id
 * that does not exist. Every joined row a tool returns is compared with what a direct read of its
 * class by the same agent returns (and, for users, with what Parse REST returns to that user);
 * which rows that direct read returns is itself checked against the seed.
 */
const run = Date.now().toString(36);
const CUST = `JCust_${run}`;
const ORDER = `JOrder_${run}`;
const TICKET = `JTicket_${run}`;
const ACME = `jacme_${run}`;
const GLOBEX = `jglobex_${run}`;
const MANAGER = `jmgr_${run}`;
const GATES = ['PARSE_AGENT_ALLOW_WRITE_TOOLS', 'PARSE_AGENT_ALLOW_RAW_CRUD'] as const;
const master: RestAuth = { masterKey: true };
const MISSING_ID = 'zzzzzzzzzz';

@ParseClass(CUST)
@AgentVisible()
@AgentFields('tenantId', 'name', 'email', 'tier')
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId')
class JCust {}

@ParseClass(ORDER)
@AgentVisible()
@AgentFields('tenantId', 'number', 'customer', 'customers')
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId')
class JOrder {
  @AgentMethod({
    permission: 'write',
    description: 'Point this order at another customer.',
    parameters: {
      type: 'object',
      properties: { customer_id: { type: 'string' } },
      required: ['customer_id'],
      additionalProperties: false,
    },
  })
  async relink(args: { customer_id: string }, ctx: AgentMethodContext) {
    await ctx.data.update!(
      ORDER,
      ctx.objectId!,
      { customer: pointer(CUST, args.customer_id) },
      ctx.signal,
    );
    return { relinked: ctx.objectId };
  }

  @AgentMethod({
    permission: 'write',
    description: 'Add a customer to the people watching this order.',
    parameters: {
      type: 'object',
      properties: { customer_id: { type: 'string' } },
      required: ['customer_id'],
      additionalProperties: false,
    },
  })
  async watch(args: { customer_id: string }, ctx: AgentMethodContext) {
    await ctx.data.update!(
      ORDER,
      ctx.objectId!,
      { watchers: { __op: 'AddRelation', objects: [pointer(CUST, args.customer_id)] } },
      ctx.signal,
    );
    return { watched: ctx.objectId };
  }

  @AgentMethod({
    permission: 'write',
    description: 'Open an order for a customer.',
    parameters: {
      type: 'object',
      properties: { customer_id: { type: 'string' } },
      required: ['customer_id'],
      additionalProperties: false,
    },
  })
  static async open(args: { customer_id: string }, ctx: AgentMethodContext) {
    return ctx.data.create!(
      ORDER,
      { tenantId: 'acme', number: 'W-method', customer: pointer(CUST, args.customer_id) },
      ctx.signal,
    );
  }
}

@ParseClass(TICKET)
@AgentVisible()
@AgentFields('tenantId', 'subject', 'order')
@AgentTenantScope('tenantId')
class JTicket {}

/**
 * Application tools that declare no access: they write through `context.write` (the policed
 * writer), which must refuse the same links the built-in write tools refuse.
 */
function registerCustomerTools(tools: ToolRegistry): void {
  const schema = {
    type: 'object',
    properties: { order_id: { type: 'string' }, customer_id: { type: 'string' } },
    required: ['customer_id'],
    additionalProperties: false,
  };
  tools.register({
    name: 'relink_order_tool',
    description: 'Point an order at another customer (application tool).',
    permission: 'write',
    inputSchema: schema,
    handler: (args: { order_id?: string; customer_id: string }, { write }: PolicedToolContext) =>
      write.update(ORDER, args.order_id!, { customer: pointer(CUST, args.customer_id) }),
  });
  tools.register({
    name: 'open_order_tool',
    description: 'Open an order for a customer (application tool).',
    permission: 'write',
    inputSchema: schema,
    handler: (args: { customer_id: string }, { write }: PolicedToolContext) =>
      write.create(ORDER, { number: 'W-tool', customer: pointer(CUST, args.customer_id) }),
  });
}

type CustomerKey = 'aOk1' | 'aOk2' | 'aDeleted' | 'aBlocked' | 'aManagerOnly' | 'gPublic' | 'gOwn';
const CUSTOMER_KEYS: CustomerKey[] = [
  'aOk1',
  'aOk2',
  'aDeleted',
  'aBlocked',
  'aManagerOnly',
  'gPublic',
  'gOwn',
];

/** The agents' per-class filter: a "blocked" customer is outside it. */
const FILTERS = { [CUST]: { tier: { $ne: 'blocked' } } };

type IdentityKind = 'master' | 'session' | 'aclUser' | 'aclRole';
const IDENTITIES: IdentityKind[] = ['master', 'session', 'aclUser', 'aclRole'];

/**
 * Which customers a direct read by an acme agent returns, from the seed alone: acme, not
 * soft-deleted, inside the filter, and (except for the master key) in an ACL acme staff hold.
 */
function readableCustomers(kind: IdentityKind): CustomerKey[] {
  return kind === 'master' ? ['aOk1', 'aOk2', 'aManagerOnly'] : ['aOk1', 'aOk2'];
}

/** The direct PostgreSQL path for every read, ahead of Parse REST (writes stay with Parse). */
function postgresFirst(paths: DataPathProvider[]): DataPathProvider[] {
  return paths.map((p) =>
    p.kind !== 'postgres'
      ? p
      : {
          kind: p.kind,
          refusal: (operation, identity) => p.refusal(operation, identity),
          bind: (identity) => p.bind(identity),
          rank: (operation) => (operation === 'write' ? 0 : 2),
          invalidate: () => p.invalidate?.(),
        },
  );
}

const BEDS = ['Parse REST first', 'PostgreSQL first'] as const;
type BedName = (typeof BEDS)[number];

const POINTER_STRING = /^([A-Za-z_]\w*)\$(.+)$/;

/** Every value anywhere in `value` that is an object of `className` carrying fields (a joined row). */
function joinedRowsOf(value: unknown, className: string, out: Data[] = []): Data[] {
  if (Array.isArray(value)) value.forEach((v) => joinedRowsOf(v, className, out));
  else if (value && typeof value === 'object') {
    const v = value as Data;
    const fields = Object.keys(v).filter((k) => !['className', 'objectId', '__type'].includes(k));
    if (v.className === className && typeof v.objectId === 'string' && fields.length) out.push(v);
    for (const nested of Object.values(v)) joinedRowsOf(nested, className, out);
  }
  return out;
}

/** The values at an include path of a row (`order.customer` goes through joined orders). */
function valuesAt(row: unknown, path: string): unknown[] {
  let current: unknown[] = [row];
  for (const segment of path.split('.')) {
    const next: unknown[] = [];
    for (const value of current) {
      if (!value || typeof value !== 'object' || Array.isArray(value)) continue;
      const v = (value as Data)[segment];
      if (Array.isArray(v)) next.push(...(v as unknown[]));
      else if (v !== undefined) next.push(v);
    }
    current = next;
  }
  return current;
}

/** The rows of a tool result, whatever its shape. */
function resultRows(result: Data): unknown[] {
  if (Array.isArray(result.results)) return result.results as unknown[];
  if (result.object) return [result.object];
  if (result.objects) return Object.values(result.objects as Data);
  return [];
}

/** Every include path and the paths it passes through: `order.customer` -> order, order.customer. */
function pathsOf(include: readonly string[]): string[] {
  const out = new Set<string>();
  for (const path of include) {
    const parts = path.split('.');
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join('.'));
  }
  return [...out];
}

const data = (envelope: ToolEnvelope): Data => {
  if (!envelope.success) {
    throw new Error(`expected success, got ${envelope.error_code}: ${envelope.error}`);
  }
  return envelope.data as Data;
};

describe('include and pointer writes follow the joined class’s read policy (real Parse Server, PostgreSQL)', () => {
  const beds = new Map<BedName, AgentTestBed>();
  const customers = {} as Record<
    CustomerKey,
    { id: string; name: string; email: string; phone: string }
  >;
  /** One acme order per customer, plus: all customers in an array, soft-deleted, manager-only, globex. */
  const orders: Record<string, string> = {};
  const tickets: string[] = [];
  let acmeUser: { objectId: string; sessionToken: string };
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const g of GATES) {
      saved[g] = process.env[g];
      process.env[g] = 'true';
    }
    acmeUser = await createUser(`j_acme_${run}`);
    const globexUser = await createUser(`j_globex_${run}`);
    const managerUser = await createUser(`j_mgr_${run}`);
    await createRole(ACME, { users: [acmeUser.objectId] });
    await createRole(GLOBEX, { users: [globexUser.objectId] });
    await createRole(MANAGER, { users: [managerUser.objectId] });
    const open = { '*': true };
    const clp = (extra: Record<string, unknown> = {}) => ({
      find: open,
      get: open,
      count: open,
      create: open,
      update: open,
      delete: open,
      addField: {},
      ...extra,
    });
    await defineClass(
      CUST,
      {
        tenantId: { type: 'String' },
        name: { type: 'String' },
        email: { type: 'String' },
        phone: { type: 'String' },
        tier: { type: 'String' },
        isDeleted: { type: 'Boolean' },
      },
      // Parse hides email from every user (the master key still reads it).
      clp({ protectedFields: { '*': ['email'] } }),
    );
    await defineClass(
      ORDER,
      {
        tenantId: { type: 'String' },
        number: { type: 'String' },
        customer: { type: 'Pointer', targetClass: CUST },
        customers: { type: 'Array' },
        watchers: { type: 'Relation', targetClass: CUST },
        isDeleted: { type: 'Boolean' },
      },
      clp(),
    );
    await defineClass(
      TICKET,
      {
        tenantId: { type: 'String' },
        subject: { type: 'String' },
        order: { type: 'Pointer', targetClass: ORDER },
      },
      clp(),
    );
    const acl = (...roles: string[]) =>
      Object.fromEntries(roles.map((r) => [`role:${r}`, { read: true, write: true }]));
    const seed: Record<CustomerKey, [Record<string, unknown>, Acl]> = {
      aOk1: [{ tenantId: 'acme', tier: 'gold' }, acl(ACME, MANAGER)],
      aOk2: [{ tenantId: 'acme', tier: 'silver' }, acl(ACME)],
      aDeleted: [{ tenantId: 'acme', tier: 'gold', isDeleted: true }, acl(ACME)],
      aBlocked: [{ tenantId: 'acme', tier: 'blocked' }, acl(ACME)],
      aManagerOnly: [{ tenantId: 'acme', tier: 'gold' }, acl(MANAGER)],
      // Readable by everyone as far as Parse is concerned: only the tenant scope keeps it out.
      gPublic: [{ tenantId: 'globex', tier: 'gold' }, { '*': { read: true } }],
      gOwn: [{ tenantId: 'globex', tier: 'gold' }, acl(GLOBEX)],
    };
    for (const key of CUSTOMER_KEYS) {
      const [fields, rowAcl] = seed[key];
      const marker = `${key}-${run}`;
      const row = {
        name: `NAME-${marker}`,
        email: `EMAIL-${marker}@example.test`,
        phone: `PHONE-${marker}`,
      };
      customers[key] = { id: await createObject(CUST, { ...fields, ...row }, rowAcl), ...row };
    }
    for (const key of CUSTOMER_KEYS) {
      orders[key] = await createObject(
        ORDER,
        { tenantId: 'acme', number: `N-${key}`, customer: pointer(CUST, customers[key].id) },
        acl(ACME),
      );
    }
    orders.all = await createObject(
      ORDER,
      {
        tenantId: 'acme',
        number: 'N-all',
        customer: pointer(CUST, customers.aOk2.id),
        customers: [
          ...CUSTOMER_KEYS.map((k) => pointer(CUST, customers[k].id)),
          pointer(CUST, MISSING_ID),
        ],
      },
      acl(ACME),
    );
    orders.deleted = await createObject(
      ORDER,
      {
        tenantId: 'acme',
        number: 'N-deleted',
        isDeleted: true,
        customer: pointer(CUST, customers.aOk1.id),
      },
      acl(ACME),
    );
    orders.managerOnly = await createObject(
      ORDER,
      { tenantId: 'acme', number: 'N-mgr', customer: pointer(CUST, customers.aOk1.id) },
      acl(MANAGER),
    );
    orders.globex = await createObject(
      ORDER,
      { tenantId: 'globex', number: 'N-globex', customer: pointer(CUST, customers.aOk1.id) },
      { '*': { read: true } },
    );
    orders.dangling = await createObject(
      ORDER,
      { tenantId: 'acme', number: 'N-dangling', customer: pointer(CUST, MISSING_ID) },
      acl(ACME),
    );
    for (const [key, id] of Object.entries(orders)) {
      tickets.push(
        await createObject(
          TICKET,
          { tenantId: 'acme', subject: `S-${key}`, order: pointer(ORDER, id) },
          acl(ACME),
        ),
      );
    }
    const postgres = { uri: testParseConfig().databaseURI };
    beds.set('Parse REST first', await createAgentTestBed([JCust, JOrder, JTicket], { postgres }));
    beds.set(
      'PostgreSQL first',
      await createAgentTestBed([JCust, JOrder, JTicket], {
        postgres,
        dataPathProviders: postgresFirst,
      }),
    );
    for (const bed of beds.values()) registerCustomerTools(bed.tools);
  }, 120_000);

  afterAll(async () => {
    for (const g of GATES) {
      if (saved[g] === undefined) delete process.env[g];
      else process.env[g] = saved[g];
    }
    for (const bed of beds.values()) await bed.close();
  });

  function agentFor(bed: BedName, kind: IdentityKind): ParseAgent {
    const base = {
      tenantId: 'acme',
      filters: FILTERS,
      permissions: 'write' as const,
      allowMutations: true,
      confirmationRequired: false,
    };
    const factory = beds.get(bed)!.factory;
    switch (kind) {
      case 'master':
        return factory.create(base);
      case 'session':
        return factory.create({ ...base, sessionToken: acmeUser.sessionToken });
      case 'aclUser':
        return factory.create({ ...base, aclUser: acmeUser.objectId });
      case 'aclRole':
        return factory.create({ ...base, aclRole: ACME });
    }
  }

  /** What a direct read of the customer class by this agent returns, by id. */
  async function directCustomers(agent: ParseAgent): Promise<Map<string, Data>> {
    const rows = data(await agent.execute('query_class', { class_name: CUST, limit: 100 })).results;
    return new Map((rows as Data[]).map((r) => [r.objectId as string, r]));
  }

  async function directOrders(agent: ParseAgent): Promise<Map<string, Data>> {
    const rows = data(
      await agent.execute('query_class', { class_name: ORDER, limit: 100 }),
    ).results;
    return new Map((rows as Data[]).map((r) => [r.objectId as string, r]));
  }

  /** What must never appear in anything this agent is answered: fields of rows it cannot read. */
  function forbidden(kind: IdentityKind): string[] {
    const readable = new Set(readableCustomers(kind));
    const out: string[] = [];
    for (const key of CUSTOMER_KEYS) {
      const c = customers[key];
      out.push(c.phone); // outside the allowlist for everyone
      if (!readable.has(key)) out.push(c.name, c.email);
      else if (kind !== 'master') out.push(c.email); // protectedFields
    }
    return out;
  }

  function assertNothingForbidden(kind: IdentityKind, envelope: unknown, label: string): void {
    const text = JSON.stringify(envelope);
    const leaked = forbidden(kind).filter((s) => text.includes(s));
    expect({ label, leaked }).toEqual({ label, leaked: [] });
  }

  /**
   * Every joined customer and order in a result is a row the direct read returns, with no field
   * that read does not show and the same values; every pointer left bare at an include path names
   * a row the direct read does not return (a readable one is always joined). Returns how many
   * joined rows were checked.
   */
  function assertJoinsMatch(
    label: string,
    result: Data,
    direct: Record<string, Map<string, Data>>,
    include: readonly string[],
  ): number {
    let joined = 0;
    const compare = (className: string, row: Data) => {
      const twin = direct[className]?.get(row.objectId as string);
      expect({ label, className, id: row.objectId, direct: !!twin }).toEqual({
        label,
        className,
        id: row.objectId,
        direct: true,
      });
      const extra = Object.keys(row).filter(
        (k) => k !== 'className' && k !== '__type' && !(k in twin!),
      );
      expect({ label, className, extra }).toEqual({ label, className, extra: [] });
      for (const [k, v] of Object.entries(row)) {
        if (k === 'className' || (typeof v === 'object' && v !== null)) continue;
        expect({ label, k, v }).toEqual({ label, k, v: twin![k] });
      }
    };
    // Anywhere in the result: a row of these classes that carries fields is one the agent reads.
    for (const className of Object.keys(direct)) {
      for (const row of joinedRowsOf(result, className)) compare(className, row);
    }
    for (const path of pathsOf(include)) {
      for (const row of resultRows(result)) {
        for (const value of valuesAt(row, path)) {
          if (typeof value === 'string') {
            const m = POINTER_STRING.exec(value);
            expect({ label, path, value, pointer: !!m }).toEqual({
              label,
              path,
              value,
              pointer: true,
            });
            const readable = direct[m![1]]?.has(m![2]) ?? false;
            expect({ label, path, value, readable }).toEqual({
              label,
              path,
              value,
              readable: false,
            });
          } else {
            expect({ label, path, joined: typeof value }).toEqual({
              label,
              path,
              joined: 'object',
            });
            joined += 1;
          }
        }
      }
    }
    return joined;
  }

  describe.each(BEDS)('%s', (bedName) => {
    describe.each(IDENTITIES)('a %s agent bound to acme', (kind) => {
      let agent: ParseAgent;
      let direct: Record<string, Map<string, Data>>;

      beforeAll(async () => {
        agent = agentFor(bedName, kind);
        direct = { [CUST]: await directCustomers(agent), [ORDER]: await directOrders(agent) };
      });

      it('reads directly exactly the customers the seed says it may (the oracle is right)', async () => {
        const expected = readableCustomers(kind)
          .map((k) => customers[k].id)
          .sort();
        expect([...direct[CUST].keys()].sort()).toEqual(expected);
        for (const row of direct[CUST].values()) {
          expect(row).not.toHaveProperty('phone');
          if (kind === 'master') expect(row.email).toEqual(expect.any(String));
          else expect(row).not.toHaveProperty('email');
        }
        const orderIds = [...direct[ORDER].keys()];
        expect(orderIds).not.toContain(orders.deleted);
        expect(orderIds).not.toContain(orders.globex);
        if (kind === 'master') expect(orderIds).toContain(orders.managerOnly);
        else expect(orderIds).not.toContain(orders.managerOnly);
        // Parse itself agrees for users: every customer the agent reads, the user reads over REST.
        if (kind === 'session' || kind === 'aclUser') {
          const rest = await findRows(CUST, {}, { sessionToken: acmeUser.sessionToken });
          const restIds = new Set(rest.map((r) => r.objectId));
          for (const id of direct[CUST].keys()) expect(restIds.has(id)).toBe(true);
          for (const r of rest) expect(r).not.toHaveProperty('email');
        }
      });

      /** Generated calls: every tool that takes include, each include shape, keys or none. */
      const calls: Array<[string, string, () => Record<string, unknown>, string[]]> = [];
      const shapes: Array<[string, string[], string[] | undefined]> = [];
      const keyChoices: Record<string, Array<string[] | undefined>> = {
        customer: [
          undefined,
          ['number', 'customer'],
          ['number', 'customer.name', 'customer.email', 'customer.phone'],
        ],
        customers: [undefined, ['number', 'customers']],
        'order.customer': [
          undefined,
          ['subject', 'order.number', 'order.customer.name', 'order.customer.email'],
        ],
        'order.customers': [undefined, ['subject', 'order.customers']],
      };
      for (const [path, choices] of Object.entries(keyChoices)) {
        for (const keys of choices) {
          const nested = path.startsWith('order.');
          const include = nested ? ['order', path] : [path];
          shapes.push([nested ? TICKET : ORDER, include, keys]);
        }
      }
      // Dotted keys without include: Parse REST reads them as an include of its own, unpoliced.
      shapes.push([ORDER, [], ['number', 'customer.name', 'customer.email']]);
      shapes.push([ORDER, [], ['number', 'customers.name']]);
      shapes.push([TICKET, ['order'], ['subject', 'order.customer.name', 'order.customers.name']]);
      shapes.push([ORDER, ['customer', 'customers'], undefined]);
      shapes.push([TICKET, ['order.customer', 'order.customers'], undefined]);
      for (const [className, include, keys] of shapes) {
        const label = `${className.split('_')[0]} include=${include.join('+')} keys=${keys?.join('+') ?? '-'}`;
        calls.push([
          `query_class ${label}`,
          'query_class',
          () => ({ class_name: className, include, ...(keys ? { keys } : {}), limit: 100 }),
          include,
        ]);
        calls.push([
          `export_data ${label}`,
          'export_data',
          () => ({ class_name: className, include, ...(keys ? { keys } : {}), format: 'csv' }),
          include,
        ]);
        calls.push([
          `get_objects ${label}`,
          'get_objects',
          () => ({
            class_name: className,
            // Not the globex order: get_objects refuses a row of another tenant outright.
            ids:
              className === ORDER
                ? Object.values(orders).filter((id) => id !== orders.globex)
                : tickets,
            include,
          }),
          include,
        ]);
      }

      it.each(calls)(
        '%s joins only what a direct read returns',
        async (label, tool, args, include) => {
          const envelope = await agent.execute(tool, args());
          const result = data(envelope);
          assertNothingForbidden(kind, envelope, label);
          if (tool === 'export_data') return; // CSV: the forbidden strings are the check
          const n = assertJoinsMatch(label, result, direct, include);
          if (!include.length) {
            // A dotted key reaches into a pointer only through include: nothing is joined.
            expect(joinedRowsOf(result, CUST)).toEqual([]);
            expect(result).not.toHaveProperty('withheld_includes');
            return;
          }
          expect(n).toBeGreaterThan(0);
          // Something was always withheld here (globex, deleted, filtered, missing): the agent is told.
          expect(result.withheld_includes).toEqual(expect.any(Object));
          expect(result.withheld_includes_note).toEqual(expect.any(String));
        },
      );

      it('get_object with include, on every order and ticket it can read', async () => {
        let joined = 0;
        for (const id of Object.values(orders)) {
          const envelope = await agent.execute('get_object', {
            class_name: ORDER,
            object_id: id,
            include: ['customer', 'customers'],
          });
          assertNothingForbidden(kind, envelope, `get_object ${id}`);
          if (!direct[ORDER].has(id)) {
            expect(envelope).toMatchObject({ success: false });
            continue;
          }
          joined += assertJoinsMatch(`get_object ${id}`, data(envelope), direct, [
            'customer',
            'customers',
          ]);
        }
        for (const id of tickets) {
          const envelope = await agent.execute('get_object', {
            class_name: TICKET,
            object_id: id,
            include: ['order.customer'],
          });
          assertNothingForbidden(kind, envelope, `get_object ticket ${id}`);
          joined += assertJoinsMatch(`get_object ticket ${id}`, data(envelope), direct, [
            'order.customer',
          ]);
        }
        expect(joined).toBeGreaterThan(0);
      });

      it('aggregate $lookup (the PostgreSQL path) joins only customers a direct read returns', async () => {
        const envelope = await agent.execute('aggregate', {
          class_name: ORDER,
          pipeline: [
            {
              $lookup: {
                from: CUST,
                localField: 'customer',
                foreignField: 'objectId',
                as: 'buyer',
              },
            },
            { $project: { number: 1, customer: 1, buyer: 1 } },
          ],
        });
        assertNothingForbidden(kind, envelope, 'aggregate $lookup');
        const rows = data(envelope).results as Data[];
        let joined = 0;
        let empty = 0;
        for (const row of rows) {
          const buyers = row.buyer as Data[];
          if (!buyers.length) empty += 1;
          for (const buyer of buyers) {
            const twin = direct[CUST].get(buyer.objectId as string);
            expect({ id: buyer.objectId, direct: !!twin }).toEqual({
              id: buyer.objectId,
              direct: true,
            });
            expect(Object.keys(buyer).filter((k) => !(k in twin!))).toEqual([]);
            joined += 1;
          }
        }
        // Orders point to every kind of customer: some joins find one, the others nothing.
        expect(joined).toBeGreaterThan(0);
        expect(empty).toBeGreaterThan(0);
        // The let/pipeline form scopes the joined class the same way: the same customers join,
        // each one a direct read returns, with no field a direct read would not show.
        const free = await agent.execute('aggregate', {
          class_name: ORDER,
          pipeline: [
            {
              $lookup: {
                from: CUST,
                let: { c: '$customer' },
                pipeline: [{ $match: { $expr: { $eq: ['$objectId', '$$c'] } } }],
                as: 'buyer',
              },
            },
            { $project: { number: 1, customer: 1, buyer: 1 } },
          ],
        });
        assertNothingForbidden(kind, free, 'aggregate $lookup let/pipeline');
        let freeJoined = 0;
        for (const row of data(free).results as Data[]) {
          for (const buyer of row.buyer as Data[]) {
            const twin = direct[CUST].get(buyer.objectId as string);
            expect({ id: buyer.objectId, direct: !!twin }).toEqual({
              id: buyer.objectId,
              direct: true,
            });
            expect(Object.keys(buyer).filter((k) => !(k in twin!))).toEqual([]);
            freeJoined += 1;
          }
        }
        expect(freeJoined).toBe(joined);
      });

      describe('writes', () => {
        const targets: Array<CustomerKey | 'missing'> = [...CUSTOMER_KEYS, 'missing'];
        const idOf = (t: CustomerKey | 'missing') =>
          t === 'missing' ? MISSING_ID : customers[t].id;
        const writes: Array<[string, (id: string) => [string, Record<string, unknown>]]> = [
          [
            'create_object',
            (id) => [
              'create_object',
              { class_name: ORDER, values: { number: 'W-tool', customer: pointer(CUST, id) } },
            ],
          ],
          [
            'update_object pointer',
            (id) => [
              'update_object',
              {
                class_name: ORDER,
                object_id: orders.aOk2,
                values: { customer: pointer(CUST, id) },
              },
            ],
          ],
          [
            'update_object array',
            (id) => [
              'update_object',
              {
                class_name: ORDER,
                object_id: orders.aOk2,
                values: { customers: [pointer(CUST, customers.aOk1.id), pointer(CUST, id)] },
              },
            ],
          ],
          [
            'update_object AddUnique',
            (id) => [
              'update_object',
              {
                class_name: ORDER,
                object_id: orders.aOk2,
                values: { customers: { __op: 'AddUnique', objects: [pointer(CUST, id)] } },
              },
            ],
          ],
          [
            'call_method AddRelation',
            (id) => [
              'call_method',
              {
                class_name: ORDER,
                method_name: 'watch',
                object_id: orders.aOk2,
                arguments: { customer_id: id },
              },
            ],
          ],
          [
            'call_method (instance)',
            (id) => [
              'call_method',
              {
                class_name: ORDER,
                method_name: 'relink',
                object_id: orders.aOk2,
                arguments: { customer_id: id },
              },
            ],
          ],
          [
            'custom tool context.write update',
            (id) => ['relink_order_tool', { order_id: orders.aOk2, customer_id: id }],
          ],
          ['custom tool context.write create', (id) => ['open_order_tool', { customer_id: id }]],
          [
            'call_method (class)',
            (id) => [
              'call_method',
              { class_name: ORDER, method_name: 'open', arguments: { customer_id: id } },
            ],
          ],
        ];

        /** What a write could change: the order written to, its relation, and the orders that exist. */
        async function snapshot(): Promise<string> {
          const order = await parseRest<Data>(
            'GET',
            `/classes/${ORDER}/${orders.aOk2}`,
            undefined,
            master,
          );
          const watchers = await findRows(
            CUST,
            { $relatedTo: { object: pointer(ORDER, orders.aOk2), key: 'watchers' } },
            master,
          );
          const all = await findRows(ORDER, {}, master, { limit: '1000', keys: 'objectId' });
          return JSON.stringify({
            customer: order.customer,
            customers: order.customers ?? null,
            updatedAt: order.updatedAt,
            watchers: watchers.map((w) => w.objectId).sort(),
            orders: all.map((o) => o.objectId).sort(),
          });
        }

        /** Puts the order back as seeded and removes orders the writes created. */
        async function restore(): Promise<void> {
          const watchers = await findRows(
            CUST,
            { $relatedTo: { object: pointer(ORDER, orders.aOk2), key: 'watchers' } },
            master,
          );
          await parseRest(
            'PUT',
            `/classes/${ORDER}/${orders.aOk2}`,
            {
              customer: pointer(CUST, customers.aOk2.id),
              customers: { __op: 'Delete' },
              ...(watchers.length
                ? {
                    watchers: {
                      __op: 'RemoveRelation',
                      objects: watchers.map((w) => pointer(CUST, w.objectId as string)),
                    },
                  }
                : {}),
            },
            master,
          );
          for (const created of await findRows(
            ORDER,
            { number: { $in: ['W-tool', 'W-method'] } },
            master,
          )) {
            await parseRest(
              'DELETE',
              `/classes/${ORDER}/${String(created.objectId)}`,
              undefined,
              master,
            );
          }
        }

        it.each(writes)(
          '%s links only customers the agent can read; any other is refused alike and nothing is written',
          async (label, make) => {
            const readable = new Set(readableCustomers(kind));
            const messages = new Map<string, string>();
            for (const target of targets) {
              const id = idOf(target);
              const before = await snapshot();
              const [tool, args] = make(id);
              const envelope = await agent.execute(tool, args);
              assertNothingForbidden(kind, envelope, `${label} ${target}`);
              if (target !== 'missing' && readable.has(target)) {
                expect({ target, envelope }).toMatchObject({ target, envelope: { success: true } });
                await restore();
                continue;
              }
              expect({ target, envelope }).toMatchObject({
                target,
                envelope: {
                  success: false,
                  error_code: 'access_denied',
                  details: { kind: 'unreadable_pointer' },
                },
              });
              expect({ target, after: await snapshot() }).toEqual({ target, after: before });
              const error = (envelope as { error: string }).error;
              messages.set(target, error.split(id).join('<id>'));
            }
            // A missing customer and an unreadable one get the same answer.
            expect(new Set(messages.values()).size).toBe(1);
            expect(messages.has('missing')).toBe(true);
          },
          120_000,
        );
      });
    });
  });
});
