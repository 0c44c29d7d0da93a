/**
 * Joins (`include`, and `$lookup` in pipelines) on the direct MongoDB path, evaluated with mingo
 * over the Parse-on-Mongo storage fixture (no MongoDB server runs here). Every joined customer is
 * compared with an oracle computed from the stored documents: the customer's tenant, the class's
 * canonical filter, the agent's filter and, except for the master key, the row ACL (`_rperm`) of
 * the identity's principals. Session tokens are resolved by a stand-in for Parse's `/users/me`.
 */
import 'reflect-metadata';
import {
  buildParseMongoFixture,
  readableBy,
} from '../../../../../test/fixtures/parse-mongo-fixture';
import { mingoDatabase } from '../../../../../test/fixtures/mingo-database';
import { ParseAgent } from '../../agent/parse-agent';
import { AgentEvents } from '../../core/agent-events';
import type { ParseSchema, SchemaSource } from '../../core/parse-schema';
import { suppressSecurityBanners } from '../../core/security-banner';
import { AgentCanonicalFilter } from '../../metadata/decorators/agent-canonical-filter.decorator';
import { AgentTenantScope } from '../../metadata/decorators/agent-tenant-scope.decorator';
import { ParseClass } from '../../metadata/decorators/parse-class.decorator';
import { MetadataRegistry } from '../../metadata/metadata-registry';
import { BUILTIN_TOOLS } from '../../tools/builtin';
import { ToolRegistry } from '../../tools/tool-registry';
import { DataRouter } from '../data-router';
import { createMongoDataPathProvider } from './create-mongo-data-path';
import { schemaFromMongoDoc } from './mongo-schema';

const fixture = buildParseMongoFixture();
const C = fixture.collections;

@ParseClass('Order')
@AgentTenantScope('orgId')
class OrderModel {}

/** 'Customer 4' stands for a soft-deleted row: the canonical filter leaves it out. */
@ParseClass('Customer')
@AgentCanonicalFilter({ name: { $ne: 'Customer 4' } })
@AgentTenantScope('orgId')
class CustomerModel {}

/** The agents' own filter: 'Customer 8' is outside it. */
const FILTERS = { Customer: { name: { $ne: 'Customer 8' } } };

/** A stand-in for Parse Server's `/users/me`: one session token, alice's. */
const sessionsOnly = {
  request: async <T>(method: string, path: string, _body: unknown, auth: unknown): Promise<T> => {
    const token = (auth as { sessionToken?: string }).sessionToken;
    if (method === 'GET' && path === '/users/me' && token === 'r:alice') {
      return { objectId: 'u_alice' } as T;
    }
    throw new Error(`no Parse REST here (${method} ${path})`);
  },
};

type Kind = 'master' | 'session' | 'aclUser' | 'aclRole';

/** The principals each identity reads with (`undefined`: the master key, no row ACL). */
const PRINCIPALS: Record<Kind, string[] | undefined> = {
  master: undefined,
  session: ['*', 'u_alice', 'role:staff'],
  aclUser: ['*', 'u_alice', 'role:staff'],
  aclRole: ['*', 'role:staff'],
};

function agentOnMongo(kind: Kind): ParseAgent {
  const metadata = new MetadataRegistry();
  metadata.register(OrderModel, CustomerModel);
  const parsed = new Map<string, ParseSchema>(
    C._SCHEMA.map((doc) => {
      const s = schemaFromMongoDoc(doc);
      return [s.className, { className: s.className, fields: s.fields }];
    }),
  );
  const schemas: SchemaSource = {
    get: async (c) => parsed.get(c),
    all: async () => parsed,
    invalidate: () => undefined,
  };
  const provider = createMongoDataPathProvider({}, sessionsOnly, async () => mingoDatabase(C));
  const identity =
    kind === 'session'
      ? { sessionToken: 'r:alice' }
      : kind === 'aclUser'
        ? { aclUser: 'u_alice' }
        : kind === 'aclRole'
          ? { aclRole: 'staff' }
          : {};
  return new ParseAgent(
    { ...identity, tenantId: 'acme', filters: FILTERS },
    {
      data: new DataRouter([provider]),
      schemas,
      metadata,
      tools: new ToolRegistry(BUILTIN_TOOLS),
      events: new AgentEvents(),
    },
  );
}

/** The oracle: whether a direct read of the customer by this identity returns it. */
function customerReadable(kind: Kind, id: string): boolean {
  const c = C.Customer.find((doc) => doc._id === id);
  if (!c || c.orgId !== 'acme' || c.name === 'Customer 4' || c.name === 'Customer 8') return false;
  const principals = PRINCIPALS[kind];
  return principals === undefined || readableBy(c, principals);
}

function orderReadable(kind: Kind, id: string): boolean {
  const o = C.Order.find((doc) => doc._id === id);
  if (!o || o.orgId !== 'acme') return false;
  const principals = PRINCIPALS[kind];
  return principals === undefined || readableBy(o, principals);
}

/** What a customer row may show: its stored fields under API names, nothing internal. */
const CUSTOMER_FIELDS = new Set(['objectId', 'createdAt', 'updatedAt', 'name', 'orgId', 'email']);

type Row = Record<string, unknown>;

beforeAll(() => suppressSecurityBanners());

describe.each<Kind>(['master', 'session', 'aclUser', 'aclRole'])(
  'joins on the direct MongoDB path (mingo) for a %s agent bound to acme',
  (kind) => {
    const agent = agentOnMongo(kind);
    const expected = C.Customer.map((c) => String(c._id)).filter((id) =>
      customerReadable(kind, id),
    );

    it('reads directly exactly the customers the oracle names', async () => {
      const result = await agent.execute('query_class', { class_name: 'Customer', limit: 100 });
      expect(result).toMatchObject({ success: true });
      const rows = (result as { data: { results: Row[] } }).data.results;
      expect(rows.map((r) => r.objectId).sort()).toEqual([...expected].sort());
    });

    it('query_class include joins only those customers, and every one of them', async () => {
      const result = await agent.execute('query_class', {
        class_name: 'Order',
        include: ['customer'],
        limit: 1000,
      });
      expect(result).toMatchObject({ success: true });
      const data = (result as { data: { results: Row[]; withheld_includes?: Row } }).data;
      expect(data.results.length).toBeGreaterThan(0);
      let joined = 0;
      const bare = new Set<string>();
      for (const order of data.results) {
        expect(orderReadable(kind, String(order.objectId))).toBe(true);
        const value = order.customer;
        if (typeof value === 'string') {
          const id = value.split('$')[1];
          expect({ id, readable: customerReadable(kind, id) }).toEqual({ id, readable: false });
          bare.add(id);
          continue;
        }
        const customer = value as Row;
        const id = String(customer.objectId);
        expect({ id, readable: customerReadable(kind, id) }).toEqual({ id, readable: true });
        const extra = Object.keys(customer).filter(
          (k) => k !== 'className' && !CUSTOMER_FIELDS.has(k),
        );
        expect(extra).toEqual([]);
        const stored = C.Customer.find((c) => c._id === id)!;
        expect(customer).toMatchObject({ name: stored.name, orgId: 'acme' });
        joined += 1;
      }
      expect(joined).toBeGreaterThan(0);
      expect(bare.size).toBeGreaterThan(0);
      expect(data.withheld_includes).toEqual({ customer: bare.size });
      const text = JSON.stringify(result);
      for (const c of C.Customer) {
        if (!customerReadable(kind, String(c._id))) expect(text).not.toContain(String(c.email));
      }
    });

    it('get_object include joins the same way', async () => {
      const orders = C.Order.filter((o) => orderReadable(kind, String(o._id))).slice(0, 24);
      for (const o of orders) {
        const result = await agent.execute('get_object', {
          class_name: 'Order',
          object_id: String(o._id),
          include: ['customer'],
        });
        expect(result).toMatchObject({ success: true });
        const customer = (result as { data: { object: Row } }).data.object.customer;
        const id = String(o._p_customer).split('$')[1];
        if (customerReadable(kind, id)) expect(customer).toMatchObject({ objectId: id });
        else expect(customer).toBe(`Customer$${id}`);
      }
    });

    it('aggregate $lookup joins only customers the oracle names', async () => {
      const result = await agent.execute('aggregate', {
        class_name: 'Order',
        pipeline: [
          {
            $lookup: {
              from: 'Customer',
              localField: 'customer',
              foreignField: 'objectId',
              as: 'buyer',
            },
          },
          { $project: { customer: 1, buyer: 1 } },
        ],
      });
      expect(result).toMatchObject({ success: true });
      const rows = (result as { data: { results: Row[] } }).data.results;
      let joined = 0;
      for (const row of rows) {
        for (const buyer of row.buyer as Row[]) {
          const id = String(buyer.objectId);
          expect({ id, readable: customerReadable(kind, id) }).toEqual({ id, readable: true });
          joined += 1;
        }
      }
      expect(joined).toBeGreaterThan(0);
    });
  },
);
