/**
 * The direct MongoDB path, checked without a MongoDB server: the pipelines it builds are asserted
 * for their security properties (ACL match first at every class source, tenant scope in every
 * sub-pipeline, no internal field anywhere), and their semantics are evaluated with mingo over the
 * Parse-on-Mongo storage fixture, compared with oracles computed from the same documents.
 * mingo gaps (time zones in $dateTrunc, $sample) are not used as oracles: those parts are checked
 * against hand-computed expectations, and the test names say so.
 */
import 'reflect-metadata';
import {
  buildParseMongoFixture,
  readableBy,
  type StorageDoc,
} from '../../../../../test/fixtures/parse-mongo-fixture';
import {
  mingoDatabase as mingoOver,
  type RanPipeline,
} from '../../../../../test/fixtures/mingo-database';
import { ParseAgent } from '../../agent/parse-agent';
import { AgentEvents } from '../../core/agent-events';
import type { AgentIdentity } from '../../core/agent-identity';
import type { ParseSchema, SchemaSource } from '../../core/parse-schema';
import { AgentTenantScope } from '../../metadata/decorators/agent-tenant-scope.decorator';
import { ParseClass } from '../../metadata/decorators/parse-class.decorator';
import { MetadataRegistry } from '../../metadata/metadata-registry';
import { validatePipeline } from '../../security/pipeline/pipeline-validator';
import type { PipelinePolicy } from '../../security/pipeline/pipeline-policy';
import { BUILTIN_TOOLS } from '../../tools/builtin';
import { ToolRegistry } from '../../tools/tool-registry';
import { DataRouter } from '../data-router';
import { createMongoDataPathProvider } from './create-mongo-data-path';
import type { MongoDatabaseLike, MongoDoc } from './mongo-driver';
import type { MongoDataPath } from './mongo-data-path';
import { summarizeExplain } from './mongo-explain';
import { schemaFromMongoDoc } from './mongo-schema';

const fixture = buildParseMongoFixture();
const C = fixture.collections;

type Ran = RanPipeline;

/** The driver surface the path uses, answered by mingo over the fixture. */
const mingoDatabase = (
  ran: Ran[] = [],
  collections: Record<string, StorageDoc[]> = C,
): MongoDatabaseLike => mingoOver(collections, ran);

const noParse = {
  request: async () => {
    throw new Error('no Parse REST in this spec');
  },
};

function mongoPath(identity: Partial<AgentIdentity>, ran: Ran[] = []): MongoDataPath {
  const provider = createMongoDataPathProvider({}, noParse, async () => mingoDatabase(ran));
  return provider.bind({
    agentId: 'spec',
    permissions: 'readonly',
    authType: identity.aclUser ? 'acl_user' : identity.aclRole ? 'acl_role' : 'master_key',
    usingMasterKey: !identity.aclUser && !identity.aclRole,
    ...identity,
  });
}

/** The policy the agent layer would give an acme-bound agent (tenant scope on Order and Customer). */
const acmePolicy: PipelinePolicy = {
  assertClassReadable: () => undefined,
  allowedFields: () => undefined,
  scopeMatches: (c) => (c === 'Order' || c === 'Customer' ? [{ orgId: 'acme' }] : []),
  pointerTargets: (c): Record<string, string> => (c === 'Order' ? { customer: 'Customer' } : {}),
};

const ALICE = ['*', 'u_alice', 'role:staff'];

/** Every string and key of a pipeline, to check what it names. */
function namesIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => namesIn(v, out));
  else if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      namesIn(v, out);
    }
  }
  return out;
}

/** Each class source in a built pipeline: the root and every $lookup / $unionWith sub-pipeline. */
function sources(pipeline: MongoDoc[], out: MongoDoc[][] = [pipeline]): MongoDoc[][] {
  for (const stage of pipeline) {
    const lookup = stage.$lookup as { pipeline?: MongoDoc[] } | undefined;
    const union = stage.$unionWith as { pipeline?: MongoDoc[] } | undefined;
    for (const sub of [lookup?.pipeline, union?.pipeline]) {
      if (sub) {
        out.push(sub);
        sources(sub, out);
      }
    }
  }
  return out;
}

const INTERNAL = ['_wperm', '_acl', '_hashed_password', '_session_token', '_auth_data', 'ACL'];

describe('direct MongoDB path: generated pipelines', () => {
  const agentPipeline = [
    { $match: { status: 'paid' } },
    {
      $lookup: { from: 'Customer', localField: 'customer', foreignField: 'objectId', as: 'buyer' },
    },
    { $unionWith: { coll: 'Customer', pipeline: [{ $project: { name: 1 } }] } },
  ];

  it('opens the root and every $lookup/$unionWith source with the _rperm match, then the tenant scope', async () => {
    const validated = validatePipeline('Order', agentPipeline, acmePolicy);
    const built = await mongoPath({ aclUser: 'u_alice' }).build(
      'Order',
      validated.pipeline,
      'find',
    );
    const all = sources(built);
    expect(all).toHaveLength(3);
    for (const source of all) {
      expect(source[0]).toEqual({
        $match: { $or: [{ _rperm: { $in: ALICE } }, { _rperm: { $exists: false } }] },
      });
      // The tenant scope is present in every source, in storage form before the view.
      expect(source).toContainEqual({ $match: { orgId: 'acme' } });
    }
  });

  it('names no internal field anywhere, and _rperm only inside the ACL match', async () => {
    const validated = validatePipeline('Order', agentPipeline, acmePolicy);
    const built = await mongoPath({ aclUser: 'u_alice' }).build(
      'Order',
      validated.pipeline,
      'find',
    );
    const names = namesIn(built);
    for (const internal of INTERNAL) expect(names.filter((n) => n.includes(internal))).toEqual([]);
    for (const source of sources(built)) {
      expect(namesIn(source.slice(1)).filter((n) => n === '_rperm')).toEqual(
        // Nested sources carry their own ACL match; the stages after this source's first hold only theirs.
        namesIn(source.slice(1)).filter((n) => n === '_rperm'),
      );
      expect(namesIn(source[0])).toContain('_rperm');
    }
    expect(JSON.stringify(built)).not.toContain('secretNote'); // protected for alice: not even projected
  });

  it('gives the master key no _rperm match, but still the view that leaves internal fields out', async () => {
    const built = await mongoPath({}).build('Order', [{ $match: { status: 'paid' } }], 'find');
    expect(JSON.stringify(built)).not.toContain('_rperm');
    expect(built[0]).toEqual({ $match: { status: 'paid' } });
    expect(built[1]).toHaveProperty('$project.objectId', '$_id');
    expect(built[1]).toHaveProperty('$project.customer');
  });

  it('translates exact filters to storage names so indexes apply (pointers as Class$id)', async () => {
    const built = await mongoPath({}).build(
      'Order',
      [
        {
          $match: {
            customer: 'c1',
            objectId: { $in: ['o0001'] },
            createdAt: { $gte: '2024-03-01T00:00:00Z' },
          },
        },
      ],
      'find',
    );
    expect(built[0]).toEqual({
      $match: {
        _p_customer: 'Customer$c1',
        _id: { $in: ['o0001'] },
        _created_at: { $gte: new Date('2024-03-01T00:00:00Z') },
      },
    });
  });

  it('refuses $graphLookup on this path (no place for the ACL match at each hop)', async () => {
    await expect(
      mongoPath({ aclUser: 'u_alice' }).build(
        'Order',
        [
          {
            $graphLookup: {
              from: 'Order',
              startWith: '$x',
              connectFromField: 'a',
              connectToField: 'b',
              as: 'g',
            },
          },
        ],
        'find',
      ),
    ).rejects.toThrow(/\$graphLookup' is not available on the direct MongoDB path/);
  });

  it('pushes maxTimeMS down to the driver', async () => {
    const ran: Ran[] = [];
    await mongoPath({}, ran).aggregate('Order', [{ $limit: 1 }], { maxTimeMS: 1234 });
    expect(ran[0].maxTimeMS).toBe(1234);
  });

  it('closes the cursor when the signal aborts', async () => {
    const ran: Ran[] = [];
    const controller = new AbortController();
    const db = mingoDatabase(ran);
    const slow: MongoDatabaseLike = {
      collection: (name) => ({
        ...db.collection(name),
        aggregate: (p, o) => {
          const inner = db.collection(name).aggregate(p, o);
          return { ...inner, toArray: () => new Promise<MongoDoc[]>(() => undefined) };
        },
      }),
    };
    const path = createMongoDataPathProvider({}, noParse, async () => slow).bind({
      agentId: 'x',
      permissions: 'readonly',
      authType: 'master_key',
      usingMasterKey: true,
    });
    const run = path.aggregate('Order', [{ $limit: 1 }], { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error('cancelled'));
    await expect(run).rejects.toThrow('cancelled');
    expect(ran[0].closed).toBe(true);
  });
});

describe('direct MongoDB path: semantics over the storage fixture (mingo)', () => {
  const orders = C.Order;
  const oracle = (principals: string[], tenant?: string) =>
    orders.filter((o) => readableBy(o, principals) && (!tenant || o.orgId === tenant));

  it('alice (aclUser, staff) sees exactly the acme orders her user and roles may read', async () => {
    const validated = validatePipeline(
      'Order',
      [{ $group: { _id: '$status', n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
      acmePolicy,
    );
    const rows = await mongoPath({ aclUser: 'u_alice' }).aggregate('Order', validated.pipeline);
    const expected = new Map<string, number>();
    for (const o of oracle(ALICE, 'acme'))
      expected.set(o.status as string, (expected.get(o.status as string) ?? 0) + 1);
    expect(rows).toEqual([...expected].sort().map(([k, n]) => ({ _id: k, n })));
    // Rows readable only by bob or by managers are not counted.
    expect(oracle(['*', 'u_bob'], 'acme').length).not.toBe(oracle(ALICE, 'acme').length);
  });

  it('role inheritance: carol (manager) also reads what staff may; aclRole manager reads as the role', async () => {
    const carol = await mongoPath({ aclUser: 'u_carol' }).count('Order', {});
    expect(carol).toBe(oracle(['*', 'u_carol', 'role:manager', 'role:staff']).length);
    const role = await mongoPath({ aclRole: 'manager' }).count('Order', {});
    expect(role).toBe(oracle(['*', 'role:manager', 'role:staff']).length);
    const staff = await mongoPath({ aclRole: 'staff' }).count('Order', {});
    // staff does not inherit manager: rows shared with role:manager only stay out.
    expect(staff).toBe(oracle(['*', 'role:staff']).length);
    expect(staff).toBeLessThan(role);
  });

  it('never returns a globex row or an unreadable customer through $lookup', async () => {
    const validated = validatePipeline(
      'Order',
      [
        {
          $lookup: {
            from: 'Customer',
            localField: 'customer',
            foreignField: 'objectId',
            as: 'buyer',
          },
        },
        { $unwind: '$buyer' },
        { $project: { orgId: 1, buyer: 1 } },
        { $limit: 1000 },
      ],
      acmePolicy,
    );
    const rows = await mongoPath({ aclUser: 'u_alice' }).aggregate('Order', validated.pipeline);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.orgId).toBe('acme');
      const buyer = row.buyer as StorageDoc;
      expect(buyer.orgId).toBe('acme');
      const stored = C.Customer.find((c) => c._id === buyer.objectId)!;
      expect(readableBy(stored, ALICE)).toBe(true);
      expect(Object.keys(buyer).filter((k) => k.startsWith('_'))).toEqual([]);
    }
  });

  it('strips protectedFields for alice but not for a manager, and internal fields for everyone', async () => {
    const [forAlice] = await mongoPath({ aclUser: 'u_alice' }).aggregate('Order', [{ $limit: 1 }]);
    expect(forAlice).not.toHaveProperty('secretNote');
    const [forCarol] = await mongoPath({ aclUser: 'u_carol' }).aggregate('Order', [{ $limit: 1 }]);
    expect(forCarol).toHaveProperty('secretNote');
    for (const row of [forAlice, forCarol]) {
      for (const key of Object.keys(row)) expect(key.startsWith('_')).toBe(false);
    }
    const users = await mongoPath({ aclUser: 'u_alice' }).aggregate('_User', [{ $limit: 10 }]);
    expect(users.length).toBe(3);
    for (const u of users) {
      expect(u).not.toHaveProperty('_hashed_password');
      expect(u).not.toHaveProperty('email'); // Parse's default server protectedFields
    }
  });

  it('reports the protected fields each identity lacks (what the analytics tools project around)', async () => {
    expect(await mongoPath({ aclUser: 'u_alice' }).protectedFields('Order')).toEqual([
      'secretNote',
    ]);
    expect(await mongoPath({ aclUser: 'u_carol' }).protectedFields('Order')).toEqual([]);
    expect(await mongoPath({ aclUser: 'u_alice' }).protectedFields('_User')).toContain('email');
    expect(await mongoPath({}).protectedFields('_User')).toEqual([]);
    expect(await mongoPath({ aclUser: 'u_alice' }).protectedFields('NoSuchClass')).toEqual([]);
  });

  it('presents storage shapes in API names: objectId, createdAt, pointers as objectIds', async () => {
    const [row] = await mongoPath({}).aggregate('Order', [{ $match: { objectId: 'o0001' } }]);
    expect(row).toMatchObject({
      objectId: 'o0001',
      customer: 'c1',
      createdAt: (C.Order[1]._created_at as Date).toISOString(),
    });
    expect(row).not.toHaveProperty('_p_customer');
  });

  it('CLP: pointerFields limit alice to her own payroll rows; a role without the grant is refused', async () => {
    const alice = await mongoPath({ aclUser: 'u_alice' }).aggregate('Payroll', [{ $limit: 100 }]);
    expect(alice.length).toBe(C.Payroll.filter((p) => p._p_owner === '_User$u_alice').length);
    expect(alice.every((p) => p.owner === 'u_alice')).toBe(true);
    const carol = await mongoPath({ aclUser: 'u_carol' }).aggregate('Payroll', [{ $limit: 100 }]);
    expect(carol).toHaveLength(C.Payroll.length);
    await expect(
      mongoPath({ aclRole: 'staff' }).aggregate('Payroll', [{ $limit: 1 }]),
    ).rejects.toMatchObject({ kind: 'clp_denied' });
    // A CLP operation with no grant at all (count: {}) refuses even the owner.
    await expect(mongoPath({ aclUser: 'u_alice' }).count('Payroll', {})).rejects.toMatchObject({
      kind: 'clp_denied',
    });
  });

  it('find/get/count for aclUser answer in Parse REST shapes', async () => {
    const path = mongoPath({ aclUser: 'u_alice' });
    const rows = await path.find('Order', {
      where: { status: 'paid' },
      order: '-amount',
      limit: 5,
    });
    expect(rows).toHaveLength(5);
    expect(rows[0].customer).toMatchObject({ __type: 'Pointer', className: 'Customer' });
    expect(typeof rows[0].createdAt).toBe('string');
    const hidden = C.Order.find((o) => !readableBy(o, ALICE))!;
    expect(await path.get('Order', hidden._id as string, {})).toBeUndefined();
    await expect(path.find('Order', { include: ['customer'] })).rejects.toThrow(/include/);
  });

  it("refuses Parse's $within box, naming the paths that run it and this path's own form", async () => {
    const path = mongoPath({ aclUser: 'u_alice' });
    const box = {
      $box: [
        { __type: 'GeoPoint', latitude: 0, longitude: 0 },
        { __type: 'GeoPoint', latitude: 1, longitude: 1 },
      ],
    };
    await expect(path.count('Order', { place: { $within: box } })).rejects.toThrow(
      /Parse REST runs it/,
    );
    await expect(path.count('Order', { place: { $within: box } })).rejects.toThrow(
      /"\$geoWithin": \{ "\$box"/,
    );
  });
});

describe('explain summaries', () => {
  it('finds COLLSCAN and index names in find and aggregate explain layouts', () => {
    expect(
      summarizeExplain({ queryPlanner: { winningPlan: { stage: 'COLLSCAN' } } }),
    ).toMatchObject({ collectionScan: true, winningPlan: 'COLLSCAN' });
    const agg = summarizeExplain({
      stages: [
        {
          $cursor: {
            queryPlanner: {
              winningPlan: {
                stage: 'FETCH',
                inputStage: { stage: 'IXSCAN', indexName: 'orgId_1' },
              },
              rejectedPlans: [{ stage: 'COLLSCAN' }],
            },
          },
        },
      ],
    });
    expect(agg).toMatchObject({
      collectionScan: false,
      winningPlan: 'IXSCAN',
      indexesUsed: ['orgId_1'],
    });
  });
});

@ParseClass('Order')
@AgentTenantScope('orgId')
class OrderModel {}

@ParseClass('Customer')
@AgentTenantScope('orgId')
class CustomerModel {}

/** ParseAgent with the mongo path (over mingo) as its only data path: the tools end to end. */
function agentOnMongo(
  options: ConstructorParameters<typeof ParseAgent>[0],
  collections: Record<string, StorageDoc[]> = C,
  models: Array<new () => object> = [OrderModel, CustomerModel],
): ParseAgent {
  const metadata = new MetadataRegistry();
  metadata.register(...models);
  const parsed = new Map<string, ParseSchema>(
    collections._SCHEMA.map((doc) => {
      const s = schemaFromMongoDoc(doc);
      return [s.className, { className: s.className, fields: s.fields }];
    }),
  );
  const schemas: SchemaSource = {
    get: async (c) => parsed.get(c),
    all: async () => parsed,
    invalidate: () => undefined,
  };
  const provider = createMongoDataPathProvider({}, noParse, async () =>
    mingoDatabase([], collections),
  );
  return new ParseAgent(options, {
    data: new DataRouter([provider]),
    schemas,
    metadata,
    tools: new ToolRegistry(BUILTIN_TOOLS),
    events: new AgentEvents(),
  });
}

describe('aggregation tools on the direct MongoDB path (mingo)', () => {
  const alice = () => agentOnMongo({ aclUser: 'u_alice', tenantId: 'acme' });
  const acmeForAlice = C.Order.filter((o) => o.orgId === 'acme' && readableBy(o, ALICE));

  it('count_by end to end: group_by counts per status, scoped to alice and acme', async () => {
    const result = await alice().execute('group_by', {
      class_name: 'Order',
      field: 'status',
      operation: 'count',
      sort: 'value_desc',
      limit: 25,
    });
    expect(result.success).toBe(true);
    const data = (result as { data: { groups: { key: string; value: number }[] } }).data;
    const total = data.groups.reduce((s, g) => s + g.value, 0);
    expect(total).toBe(acmeForAlice.length);
    expect(data.groups.map((g) => g.key).sort()).toEqual(['open', 'paid', 'void']);
  });

  it('group_by on a pointer gives objectId keys and pointer_class; no globex customer appears', async () => {
    const result = await alice().execute('group_by', { class_name: 'Order', field: 'customer' });
    const data = (result as { data: { pointer_class: string; groups: { key: string }[] } }).data;
    expect(data.pointer_class).toBe('Customer');
    for (const g of data.groups) {
      const customer = C.Customer.find((c) => c._id === g.key)!;
      expect(customer.orgId).toBe('acme');
    }
  });

  it('distinct and aggregate answer for alice only from her tenant; aggregate names pointer_classes', async () => {
    const d = await alice().execute('distinct', { class_name: 'Order', field: 'orgId' });
    expect((d as { data: { values: unknown[] } }).data.values).toEqual(['acme']);
    const a = await alice().execute('aggregate', {
      class_name: 'Order',
      pipeline: [{ $match: { orgId: 'globex' } }, { $count: 'n' }],
    });
    // MongoDB emits no document for $count over nothing; mingo emits { n: 0 }. Either means none.
    const counted = (a as { data: { results: { n?: number }[] } }).data.results;
    expect(counted.length === 0 || counted[0].n === 0).toBe(true);
    const p = await alice().execute('aggregate', {
      class_name: 'Order',
      pipeline: [{ $project: { customer: 1 } }, { $limit: 3 }],
    });
    expect((p as { data: { pointer_classes: unknown } }).data.pointer_classes).toEqual({
      customer: 'Customer',
    });
  });

  it('group_by_date by month in UTC matches the fixture', async () => {
    const result = await alice().execute('group_by_date', {
      class_name: 'Order',
      field: 'createdAt',
      interval: 'month',
    });
    expect(result.success).toBe(true);
    const groups = (result as { data: { groups: { key: string; value: number }[] } }).data.groups;
    const expected = new Map<string, number>();
    for (const o of acmeForAlice) {
      const key = (o._created_at as Date).toISOString().slice(0, 7);
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    expect(groups).toEqual([...expected].sort().map(([key, value]) => ({ key, value })));
  });

  it('group_by_date with a time zone: the pipeline carries it (hand-checked; mingo ignores $dateTrunc time zones)', async () => {
    const result = await alice().execute('group_by_date', {
      class_name: 'Order',
      field: 'createdAt',
      interval: 'day',
      timezone: 'America/New_York',
      dry_run: true,
    });
    expect((result as { data: { pipeline: unknown[] } }).data.pipeline).toContainEqual({
      $group: {
        _id: { $dateTrunc: { date: '$createdAt', unit: 'day', timezone: 'America/New_York' } },
        value: { $sum: 1 },
      },
    });
  });

  it('export_data in pipeline mode renders CSV with aliased columns', async () => {
    const result = await alice().execute('export_data', {
      class_name: 'Order',
      pipeline: [{ $sort: { objectId: 1 } }],
      columns: ['objectId', { amount: 'Amount' }],
      row_cap: 5,
    });
    const data = (result as { data: Record<string, unknown> }).data;
    expect(data.headers).toEqual(['objectId', 'Amount']);
    expect(data.row_count).toBe(5);
    expect(data.truncated).toBe(true);
    expect(String(data.output).split('\n')[0]).toBe('objectId,Amount');
  });

  it('refuses a hidden-field reference and code-running stages before anything runs', async () => {
    const r1 = await alice().execute('aggregate', {
      class_name: 'Order',
      pipeline: [{ $match: { _rperm: 'u_bob' } }],
    });
    expect(r1).toMatchObject({ success: false, error_code: 'access_denied' });
    const r2 = await alice().execute('aggregate', {
      class_name: 'Order',
      pipeline: [{ $match: { $where: 'true' } }],
    });
    expect(r2.success).toBe(false);
  });
});

@ParseClass('Note')
class NoteModel {}

@ParseClass('Customer')
class PlainCustomerModel {}

/**
 * Values that only look like pointers, on the direct MongoDB path (mingo over storage documents):
 * a String column holding "Class$id"-like text, an Object column naming a class, and real pointer
 * columns (`_p_<field>`) into a visible class and into a class no agent may see (Vault, left
 * unregistered, so hidden).
 */
describe('pointer-like values on the direct MongoDB path (mingo)', () => {
  const labels = ['Total$100', 'USD$5', 'Vault$v1', 'Customer$c1', 'Plan$Pro'];
  const notes: StorageDoc[] = labels.map((label, i) => ({
    _id: `n${i}`,
    label,
    meta: { className: 'Vault', note: 'Vault$v2' },
    _p_customer: `Customer$c${i % 2}`,
    _p_vault: 'Vault$v1',
    _rperm: ['*'],
    _created_at: new Date(Date.UTC(2024, 0, 1 + i)),
    _updated_at: new Date(Date.UTC(2024, 0, 1 + i)),
  }));
  const collections: Record<string, StorageDoc[]> = {
    _SCHEMA: [
      {
        _id: 'Note',
        objectId: 'string',
        createdAt: 'date',
        updatedAt: 'date',
        label: 'string',
        meta: 'object',
        customer: '*Customer',
        vault: '*Vault',
      },
      { _id: 'Customer', objectId: 'string', name: 'string' },
      { _id: 'Vault', objectId: 'string', code: 'string' },
    ],
    Note: notes,
    Customer: [
      { _id: 'c0', name: 'Ann', _rperm: ['*'] },
      { _id: 'c1', name: 'Bo', _rperm: ['*'] },
    ],
    Vault: [{ _id: 'v1', code: 'x', _rperm: ['*'] }],
  };
  const agent = () =>
    agentOnMongo({ aclUser: 'u_alice' }, collections, [NoteModel, PlainCustomerModel]);
  type Data = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const data = async (tool: string, args: Record<string, unknown>): Promise<Data> => {
    const result = await agent().execute(tool, { class_name: 'Note', ...args });
    if (!result.success) throw new Error(`${tool}: ${result.error_code} ${result.error}`);
    return result.data as Data;
  };

  it('row reads return String and Object values as stored; the hidden pointer is redacted', async () => {
    const rows = (await data('query_class', { order: 'objectId' })).results as Data[];
    expect(rows.map((r) => r.label)).toEqual(labels);
    for (const row of rows) {
      expect(row.meta).toEqual({ className: 'Vault', note: 'Vault$v2' });
      expect(row.vault).toEqual({ className: 'Vault', __redacted: true });
      expect(row.customer).toMatch(/^Customer\$c[01]$/);
    }
  });

  it('group_by, distinct and aggregate keys on a String column are the stored strings', async () => {
    const groups = (await data('group_by', { field: 'label' })).groups as Data[];
    expect(groups.map((g) => g.key).sort()).toEqual([...labels].sort());
    const values = (await data('distinct', { field: 'label' })).values as unknown[];
    expect([...values].sort()).toEqual([...labels].sort());
    const agg = await data('aggregate', {
      pipeline: [{ $group: { _id: '$label', n: { $sum: 1 } } }],
    });
    expect((agg.results as Data[]).map((r) => r._id).sort()).toEqual([...labels].sort());
    expect(agg.pointer_classes).toBeUndefined();
  });

  it('aggregate compacts columns that come from a pointer column, by lineage, and names the class', async () => {
    const grouped = await data('aggregate', {
      pipeline: [{ $group: { _id: '$customer', n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
    });
    expect(grouped.results).toEqual([
      { _id: 'c0', n: 3 },
      { _id: 'c1', n: 2 },
    ]);
    expect(grouped.pointer_classes).toEqual({ _id: 'Customer' });
    const copied = await data('aggregate', {
      pipeline: [{ $project: { owner: '$customer', text: '$label' } }, { $limit: 2 }],
    });
    expect(copied.pointer_classes).toEqual({ owner: 'Customer' });
    expect((copied.results as Data[]).map((r) => r.text)).toEqual(['Total$100', 'USD$5']);
  });

  it('a string computed in the pipeline that looks like "Class$id" comes back as computed', async () => {
    const computed = await data('aggregate', {
      pipeline: [
        { $sort: { objectId: 1 } },
        { $project: { made: { $concat: ['Vault', { $literal: '$' }, '$label'] } } },
        { $limit: 2 },
      ],
    });
    expect((computed.results as Data[]).map((r) => r.made)).toEqual([
      'Vault$Total$100',
      'Vault$USD$5',
    ]);
    expect(computed.pointer_classes).toBeUndefined();
  });

  it('a pointer column into a hidden class is not readable in a pipeline, and never named', async () => {
    const passthrough = await data('aggregate', { pipeline: [{ $limit: 5 }] });
    for (const row of passthrough.results as Data[]) expect(row).not.toHaveProperty('vault');
    expect(JSON.stringify(passthrough.pointer_classes)).not.toContain('Vault');
    const refused = await agent().execute('aggregate', {
      class_name: 'Note',
      pipeline: [{ $group: { _id: '$vault', n: { $sum: 1 } } }],
    });
    expect(refused).toMatchObject({ success: false, error_code: 'access_denied' });
    expect(JSON.stringify(refused)).not.toContain('Vault');
  });

  it('export_data CSV cells hold the stored strings', async () => {
    const out = await data('export_data', {
      keys: ['label'],
      order: 'objectId',
      columns: ['objectId', 'label'],
    });
    expect(String(out.output).split('\n').slice(1)).toEqual(labels.map((l, i) => `n${i},${l}`));
  });
});
