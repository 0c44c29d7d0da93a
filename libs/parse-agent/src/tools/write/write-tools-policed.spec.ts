/**
 * Holds every built-in write tool to the policed writer: declared with writeTool (so its handler
 * gets no data path, no raw confirmation and no raw audit), every read the writer makes carries
 * the agent's planned scope, every value written passed the write policy, nothing the path
 * over-answers reaches the result, each call leaves exactly one mutation event (field names
 * only), and a person is asked before exactly the writes the tool declares, after the checks.
 * The calls run as a master-key agent and as an aclUser agent whose writes go through the
 * ACL-scoped write path over the same over-answering path.
 */
import 'reflect-metadata';
import { Query } from 'mingo';
import { inMemoryAgentServices } from '../../../../../test/fixtures/in-memory-agent';
import { ParseAgent, type AgentOptions } from '../../agent/parse-agent';
import type { MutationEvent } from '../../core/agent-events';
import type { AgentIdentity } from '../../core/agent-identity';
import { ParseAgentConfigError } from '../../core/errors';
import { suppressSecurityBanners } from '../../core/security-banner';
import { DataRouter } from '../../data/data-router';
import { AgentFields } from '../../metadata/decorators/agent-fields.decorators';
import { AgentHidden } from '../../metadata/decorators/agent-hidden.decorator';
import { AgentMethod } from '../../metadata/decorators/agent-method.decorator';
import { AgentTenantScope } from '../../metadata/decorators/agent-tenant-scope.decorator';
import { ParseClass } from '../../metadata/decorators/parse-class.decorator';
import type { DataPath, DataPathProvider, DataRow } from '../../ports/data-path';
import type { ElicitationChannel } from '../../ports/elicitation-channel';
import { isInternalField } from '../../query/internal-fields';
import { AclScopedWriteProvider } from '../../security/acl-scoped-write-path';
import type { AgentMethodContext } from '../agent-method-context';
import { BUILTIN_TOOLS } from '../builtin';
import { ENV_GATES } from '../env-gates';
import { DEFAULT_ANALYTICS_SETTINGS, type ToolContext } from '../tool-context';
import { isWriteTool, writeTool } from './write-tool';

/** The operator's filter every read of this agent must carry: proof the read was planned. */
const SCOPE = 'SCOPE-MARKER';
const ORDER_FIELDS = ['status', 'amount', 'region', 'buyer', 'tenantId'];

@ParseClass('Order')
@AgentFields(...ORDER_FIELDS)
@AgentTenantScope('tenantId', { from: (agent) => agent.tenantId })
class OrderModel {
  @AgentMethod({ permission: 'write', description: 'Refund it.', permittedKeys: ['reason'] })
  async refund(_args: { reason: string }, ctx: AgentMethodContext) {
    // Reads of another class through ctx.data: planned and redacted like any read.
    const customers = await ctx.data.find('Customer', { where: {}, limit: 10 });
    const counted = await ctx.data.count('Customer', {});
    const other = await ctx.data.get('Customer', 'c-other', {});
    await ctx.data.update!('Order', ctx.objectId!, { status: 'VALUE-refunded' }, ctx.signal);
    return { customers, counted, other: other ?? null };
  }

  @AgentMethod({ permission: 'admin', description: 'Remove it for good.' })
  async purge(_args: unknown, ctx: AgentMethodContext) {
    await ctx.data.delete!('Order', ctx.objectId!, ctx.signal);
    return { purged: ctx.objectId };
  }

  @AgentMethod({
    permission: 'write',
    description: 'Writes even in a preview.',
    supportsDryRun: true,
  })
  async touch(_args: unknown, ctx: AgentMethodContext) {
    await ctx.data.update!('Order', ctx.objectId!, { status: 'VALUE-touched' }, ctx.signal);
    return 'touched';
  }

  @AgentMethod({ permission: 'write', description: 'Opens an order.' })
  static async open(_args: unknown, ctx: AgentMethodContext) {
    return ctx.data.create!('Order', { status: 'VALUE-opened', tenantId: 'acme' }, ctx.signal);
  }

  @AgentMethod({ permission: 'write', description: 'Changes any order.', permittedKeys: ['id'] })
  static async reach(args: { id: string }, ctx: AgentMethodContext) {
    await ctx.data.update!('Order', args.id, { status: 'VALUE-reached' }, ctx.signal);
    return 'reached';
  }
}

@ParseClass('Customer')
@AgentFields('region', 'status', 'name', 'tenantId')
@AgentTenantScope('tenantId', { from: (agent) => agent.tenantId })
class CustomerModel {}

@ParseClass('Payroll')
@AgentHidden()
class PayrollModel {}

/** What a path over-answers on every row; none of it may reach an agent. */
const LEAKS = {
  _hashed_password: 'LEAK-hash',
  _rperm: ['LEAK-rperm'],
  payee: { __type: 'Pointer', className: 'Payroll', objectId: 'LEAK-pointer' },
  salary: 'LEAK-salary',
};
const PUBLIC_ACL = { '*': { read: true, write: true } };
const pointer = (className: string, objectId: string) => ({
  __type: 'Pointer',
  className,
  objectId,
});

function seed(): Record<string, DataRow[]> {
  const row = (objectId: string, extra: DataRow) => ({
    objectId,
    createdAt: '2024-01-01T00:00:00.000Z',
    ACL: PUBLIC_ACL,
    ...extra,
  });
  return {
    Order: [
      row('o1', { status: 'paid', amount: 10, region: SCOPE, tenantId: 'acme' }),
      // Another tenant's order inside the filter: only the tenant scope stops it.
      row('o-other', { status: 'paid', amount: 20, region: SCOPE, tenantId: 'globex' }),
      // The agent's tenant, outside its filter.
      row('o-filtered', { status: 'paid', amount: 30, region: 'ELSEWHERE', tenantId: 'acme' }),
    ],
    Customer: [
      row('c1', { name: 'Ada', region: SCOPE, tenantId: 'acme' }),
      row('c-other', { name: 'Bob', region: SCOPE, tenantId: 'globex' }),
    ],
    Payroll: [row('p1', { amount: 1 })],
    Scratch: [],
  };
}

interface Entry {
  op: string;
  className?: string;
  objectId?: string;
  where?: unknown;
  values?: DataRow;
  /** Who the path was bound for: the agent's own identity, or the master key of a checked write. */
  by?: string;
}

/** A path that answers everything, ignores keys and adds what a careless path might. */
function overAnsweringPath(store: Record<string, DataRow[]>, log: Entry[], by: string): DataPath {
  const rowsOf = (className: string) => (store[className] ??= []);
  const leaky = (row: DataRow) => ({ ...row, ...LEAKS });
  return {
    kind: 'over-answering',
    async find(className, query) {
      log.push({ op: 'find', className, where: query.where, by });
      const rows = new Query(query.where ?? {}).find(rowsOf(className)).all() as DataRow[];
      return rows.slice(0, query.limit).map(leaky);
    },
    async get(className, objectId) {
      log.push({ op: 'get', className, objectId, by });
      const row = rowsOf(className).find((r) => r.objectId === objectId);
      return row && leaky(row);
    },
    async count(className, where) {
      log.push({ op: 'count', className, where, by });
      return (new Query(where).find(rowsOf(className)).all() as DataRow[]).length;
    },
    async principals() {
      return by === 'master' ? { master: true } : { master: false, principals: ['*', by] };
    },
    async create(className, values) {
      log.push({ op: 'create', className, values, by });
      rowsOf(className).push({ objectId: 'n1', ACL: PUBLIC_ACL, ...values });
      return { objectId: 'n1', createdAt: '2024-02-02T00:00:00.000Z', ...LEAKS };
    },
    async update(className, objectId, values) {
      log.push({ op: 'update', className, objectId, values, by });
      return { updatedAt: '2024-02-02T00:00:00.000Z', ...LEAKS };
    },
    async delete(className, objectId) {
      log.push({ op: 'delete', className, objectId, by });
    },
    async createClass(className) {
      log.push({ op: 'createClass', className, by });
    },
    async deleteClass(className) {
      log.push({ op: 'deleteClass', className, by });
    },
  };
}

const WRITE_OPS = new Set(['create', 'update', 'delete', 'createClass', 'deleteClass']);

type Who = 'master' | 'aclUser';

function setup(who: Who, answer: 'accept' | 'decline' = 'accept') {
  const memory = inMemoryAgentServices({
    schemas: {
      Order: {
        status: 'String',
        amount: 'Number',
        region: 'String',
        tenantId: 'String',
        salary: 'String',
        buyer: { type: 'Pointer', targetClass: 'Customer' },
        payee: { type: 'Pointer', targetClass: 'Payroll' },
      },
      Customer: { name: 'String', region: 'String', status: 'String', tenantId: 'String' },
      Payroll: { amount: 'Number' },
      Scratch: { note: 'String' },
    },
    models: [OrderModel, CustomerModel, PayrollModel],
  });
  // Classes no model declares, made reachable: delete_class removes one, create_class adds one.
  memory.services.metadata.unhide('Scratch');
  memory.services.metadata.unhide('Fresh');
  const store = seed();
  const log: Entry[] = [];
  const identityName = (identity: AgentIdentity) =>
    identity.usingMasterKey ? 'master' : String(identity.aclUser);
  const over: DataPathProvider = {
    kind: 'over-answering',
    // As Parse REST: an aclUser agent's writes are the ACL-scoped path's.
    refusal: (operation, identity) =>
      operation === 'write' && identity.authType === 'acl_user' ? 'not for aclUser' : undefined,
    bind: (identity) => overAnsweringPath(store, log, identityName(identity)),
  };
  const acl: DataPathProvider = new AclScopedWriteProvider({
    writer: over,
    reads: {
      pathFor: (operation, identity): DataPath => router.pathFor(operation, identity),
      serves: (operation, identity) => router.serves(operation, identity),
    },
    schema: (className) => memory.services.schemas.get(className),
  });
  const router: DataRouter = new DataRouter([over, acl]);
  const services = { ...memory.services, data: router };
  const events: MutationEvent[] = [];
  services.events.mutations$.subscribe((event) => events.push(event));
  const elicitation: ElicitationChannel = {
    elicit: async () => {
      log.push({ op: 'elicit' });
      return answer === 'accept'
        ? { action: 'accept', content: { confirm: true } }
        : { action: 'decline' };
    },
  };
  const options: AgentOptions = {
    filters: { default: { region: SCOPE } },
    tenantId: 'acme',
    permissions: 'admin',
    allowMutations: true,
    ...(who === 'aclUser' ? { aclUser: 'u-acme' } : {}),
  };
  const agent = new ParseAgent(options, services);
  const execute = (name: string, args: Record<string, unknown>) =>
    agent.execute(name, args, { elicitation });
  return { agent, execute, log, events, store };
}

interface Call {
  args: Record<string, unknown>;
  /** Whether the tool's declaration asks a person before this call's write. */
  asks: boolean;
  /** The write the path must see, and how many. */
  writes: string[];
  /** Only as the master key (schema changes are never an aclUser agent's). */
  masterOnly?: boolean;
}

/**
 * A call that writes, for every built-in write tool. A write tool added without a call here fails
 * the coverage test below: each one is held to the same checks.
 */
const CALLS: Record<string, Call[]> = {
  create_object: [
    {
      args: {
        class_name: 'Order',
        values: { status: 'VALUE-new', amount: 5, buyer: pointer('Customer', 'c1') },
      },
      asks: false,
      writes: ['create'],
    },
  ],
  update_object: [
    {
      args: { class_name: 'Order', object_id: 'o1', values: { status: 'VALUE-closed' } },
      asks: false,
      writes: ['update'],
    },
  ],
  delete_object: [
    { args: { class_name: 'Order', object_id: 'o1' }, asks: true, writes: ['delete'] },
  ],
  create_class: [
    {
      args: {
        class_name: 'Fresh',
        fields: { label: { type: 'String' }, buyer: { type: 'Pointer', target_class: 'Customer' } },
      },
      asks: false,
      writes: ['createClass'],
      masterOnly: true,
    },
  ],
  delete_class: [
    { args: { class_name: 'Scratch' }, asks: true, writes: ['deleteClass'], masterOnly: true },
  ],
  call_method: [
    {
      args: {
        class_name: 'Order',
        method_name: 'refund',
        object_id: 'o1',
        arguments: { reason: 'VALUE-broken' },
      },
      asks: false,
      writes: ['update'],
    },
    {
      args: { class_name: 'Order', method_name: 'purge', object_id: 'o1' },
      asks: true,
      writes: ['delete'],
    },
    { args: { class_name: 'Order', method_name: 'open' }, asks: false, writes: ['create'] },
  ],
};

const writeTools = BUILTIN_TOOLS.filter((tool) => tool.annotations?.readOnlyHint === false);
const GATES = Object.values(ENV_GATES);
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  suppressSecurityBanners();
  for (const gate of GATES) {
    saved[gate] = process.env[gate];
    process.env[gate] = 'true';
  }
});

afterAll(() => {
  for (const gate of GATES) {
    if (saved[gate] === undefined) delete process.env[gate];
    else process.env[gate] = saved[gate];
  }
});

const writesIn = (log: Entry[]) => log.filter((e) => WRITE_OPS.has(e.op));

describe('built-in write tools', () => {
  it('are every built-in tool that changes data, each declared with writeTool', () => {
    expect(writeTools.map((t) => t.name).sort()).toEqual(Object.keys(CALLS).sort());
    expect(writeTools.filter((tool) => !isWriteTool(tool)).map((t) => t.name)).toEqual([]);
    // Confirmation is declared on the definitions that ask.
    const declaring = writeTools.filter((t) => t.confirm).map((t) => t.name);
    expect(declaring.sort()).toEqual(['call_method', 'delete_class', 'delete_object']);
  });

  it('stay policed once registered (the registry copies definitions, not handlers)', () => {
    const { agent } = setup('master');
    const registry = (agent as unknown as { services: { tools: { get(n: string): never } } })
      .services.tools;
    for (const tool of writeTools) expect(isWriteTool(registry.get(tool.name))).toBe(true);
  });

  describe.each<Who>(['master', 'aclUser'])('as a %s agent', (who) => {
    const cases = Object.entries(CALLS).flatMap(([name, calls]) =>
      calls.filter((c) => who === 'master' || !c.masterOnly).map((c) => [name, c] as const),
    );

    it.each(cases)(
      '%s: planned reads, checked values, one event, the declared question',
      async (name, call) => {
        const { execute, log, events } = setup(who);
        const result = await execute(name, call.args);
        expect(result.success ? { success: true } : result).toEqual({ success: true });
        const text = JSON.stringify(result);
        // (c) nothing the path added reaches the result, the row's ACL included
        expect(text).not.toContain('LEAK');
        expect(text).not.toContain('"ACL"');
        // (a) every read of rows carries the agent's filter: it was planned
        const reads = log.filter((e) => e.op === 'find' || e.op === 'count');
        for (const read of reads) {
          expect({ ...read, planned: JSON.stringify(read.where).includes(SCOPE) }).toEqual({
            ...read,
            planned: true,
          });
        }
        // the path sees the declared writes, nothing more
        const writes = writesIn(log);
        expect(writes.map((w) => w.op)).toEqual(call.writes);
        // (b) what was written passed the write policy
        for (const write of writes.filter((w) => w.values)) {
          const keys = Object.keys(write.values!);
          expect(keys.filter((k) => isInternalField(k) || k.startsWith('_'))).toEqual([]);
          if (write.op === 'create') expect(write.values!.tenantId).toBe('acme');
          if (name !== 'call_method') {
            expect(keys.filter((k) => !ORDER_FIELDS.includes(k))).toEqual([]);
            if (write.op === 'update') expect(keys).not.toContain('tenantId');
          }
        }
        // (d) exactly one event per call, field names only
        expect(events).toHaveLength(1);
        expect(JSON.stringify(events)).not.toContain('VALUE-');
        expect(events[0].confirmed).toBe(call.asks ? true : undefined);
        // (e) the question comes after every check and before the write, and only where declared
        const asked = log.findIndex((e) => e.op === 'elicit');
        if (!call.asks) {
          expect(asked).toBe(-1);
        } else {
          const written = log.findIndex((e) => WRITE_OPS.has(e.op));
          expect(asked).toBeGreaterThan(-1);
          expect(asked).toBeLessThan(written);
          if (who === 'aclUser' && name === 'delete_object') {
            // The ACL-scoped path's own check (the row's ACL, read with the master key) ran first.
            const precheck = log.findIndex((e) => e.op === 'get' && e.by === 'master');
            expect(precheck).toBeGreaterThan(-1);
            expect(precheck).toBeLessThan(asked);
          }
        }
      },
    );

    it('the calls above really read rows (the planned-read check is not vacuous)', async () => {
      const readers = new Set<string>();
      for (const [name, c] of cases) {
        const { execute, log } = setup(who);
        await execute(name, c.args);
        if (log.some((e) => e.op === 'find' && e.className === 'Order')) readers.add(name);
      }
      expect([...readers].sort()).toEqual(['call_method', 'delete_object', 'update_object'].sort());
    });

    it.each([
      ['update_object', { class_name: 'Order', object_id: 'o-other', values: { status: 'x' } }],
      ['update_object', { class_name: 'Order', object_id: 'o-filtered', values: { status: 'x' } }],
      ['delete_object', { class_name: 'Order', object_id: 'o-other' }],
      ['delete_object', { class_name: 'Order', object_id: 'o-filtered' }],
      ['delete_object', { class_name: 'Order', object_id: 'missing' }],
      ['call_method', { class_name: 'Order', method_name: 'reach', arguments: { id: 'o-other' } }],
    ])(
      '%s of a row the agent cannot read (%j) is not found: no question, no write, no event',
      async (name, args) => {
        const { execute, log, events } = setup(who);
        const result = await execute(name, args);
        expect(result).toMatchObject({ success: false });
        expect(JSON.stringify(result)).toContain('not found');
        expect(log.some((e) => e.op === 'elicit')).toBe(false);
        expect(writesIn(log)).toEqual([]);
        expect(events).toEqual([]);
      },
    );

    it.each([
      ['a hidden class', pointer('Payroll', 'p1'), 'hidden_class'],
      ["another tenant's customer", pointer('Customer', 'c-other'), 'unreadable_pointer'],
    ])('create_object pointing to %s is refused before any write', async (_label, target, kind) => {
      const { execute, log, events } = setup(who);
      const result = await execute('create_object', {
        class_name: 'Order',
        values: { status: 'x', buyer: target },
      });
      expect(result).toMatchObject({ success: false, details: { kind } });
      expect(writesIn(log)).toEqual([]);
      expect(events).toEqual([]);
    });

    it('a declined confirmation writes nothing and records nothing', async () => {
      const { execute, log, events } = setup(who, 'decline');
      const result = await execute('delete_object', { class_name: 'Order', object_id: 'o1' });
      expect(result).toMatchObject({ success: false, details: { kind: 'confirmation_declined' } });
      expect(log.some((e) => e.op === 'elicit')).toBe(true);
      expect(writesIn(log)).toEqual([]);
      expect(events).toEqual([]);
    });

    it('a preview refuses every write the method tries; the path sees none', async () => {
      const { execute, log, events } = setup(who);
      const result = await execute('call_method', {
        class_name: 'Order',
        method_name: 'touch',
        object_id: 'o1',
        arguments: { dry_run: true },
      });
      expect(result).toMatchObject({ success: false, error_code: 'access_denied' });
      expect(JSON.stringify(result)).toContain('dry_run: true and may not write');
      expect(writesIn(log)).toEqual([]);
      expect(events).toEqual([]);
    });

    it("an agent method's ctx.data reads only planned rows, redacted, and its write is one event", async () => {
      const { execute, events } = setup(who);
      const result = (await execute('call_method', CALLS.call_method[0].args)) as {
        data: { result: { customers: DataRow[]; counted: number; other: unknown } };
      };
      const { customers, counted, other } = result.data.result;
      // Only the acme customer inside the filter; c-other (globex) is neither found nor got.
      expect(customers.map((c) => c.objectId)).toEqual(['c1']);
      expect(Object.keys(customers[0]).sort()).toEqual(
        ['createdAt', 'name', 'objectId', 'region', 'tenantId'].sort(),
      );
      expect(counted).toBe(1);
      expect(other).toBeNull();
      expect(events).toEqual([
        expect.objectContaining({
          action: 'call_method',
          method: 'Order.refund',
          changed_keys: ['status'],
          writes: [
            { action: 'update', class_name: 'Order', object_id: 'o1', changed_keys: ['status'] },
          ],
        }),
      ]);
    });
  });
});

describe('writeTool', () => {
  const context = (): ToolContext => {
    const { agent } = setup('master');
    const access = (agent as unknown as { access: ToolContext['access'] }).access;
    const path = overAnsweringPath(seed(), [], 'master');
    return {
      agent,
      access,
      data: path,
      dataFor: () => path,
      writeData: path,
      timeoutMs: 10_000,
      analytics: DEFAULT_ANALYTICS_SETTINGS,
      signal: new AbortController().signal,
      reportProgress: () => undefined,
      confirm: async () => ({ confirmed: false }),
      audit: () => undefined,
    };
  };

  it('hands the handler no raw path, confirmation or audit: reaching for one throws', async () => {
    for (const member of ['data', 'dataFor', 'writeData', 'confirm', 'audit']) {
      const sneaky = writeTool({
        name: 'sneaky',
        description: 'writes around the policy',
        inputSchema: { type: 'object' },
        category: 'mutation',
        permission: 'write',
        handler: (_args, ctx) => (ctx as unknown as Record<string, unknown>)[member],
      });
      const reached = Promise.resolve().then(() => sneaky.handler({}, context()));
      await expect(reached).rejects.toThrow(ParseAgentConfigError);
      await expect(reached).rejects.toThrow(/write tools write through context\.write/);
    }
  });

  it('refuses them at compile time too', () => {
    writeTool({
      name: 'typed',
      description: 'compile-time check',
      inputSchema: { type: 'object' },
      category: 'mutation',
      permission: 'write',
      handler: (_args, ctx) => {
        // @ts-expect-error a write tool's context has no data path
        void ctx.data;
        // @ts-expect-error nor the write path
        void ctx.writeData;
        // @ts-expect-error nor a raw confirmation: the writer asks
        void ctx.confirm;
        // @ts-expect-error nor a raw audit: the writer records
        void ctx.audit;
        return ctx.write;
      },
    });
    expect(true).toBe(true);
  });

  it('keeps no way from the writer back to its paths', () => {
    const tool = writeTool({
      name: 'probe',
      description: 'looks at what the writer exposes',
      inputSchema: { type: 'object' },
      category: 'mutation',
      permission: 'write',
      handler: (_args, ctx) => ({
        own: Object.getOwnPropertyNames(ctx.write),
        enumerable: Object.keys(ctx),
      }),
    });
    const shown = tool.handler({}, context()) as { own: string[]; enumerable: string[] };
    expect(shown.own).toEqual([]);
    expect(shown.enumerable).toEqual(expect.arrayContaining(['read', 'write']));
    expect(shown.enumerable).not.toContain('writeData');
  });
});
