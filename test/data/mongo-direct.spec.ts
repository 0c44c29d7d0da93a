/**
 * The direct MongoDB path against a real MongoDB, when TEST_MONGODB_URI points at one (the
 * docker-compose.yml `mongo` service, for example). It loads the same Parse-on-Mongo storage fixture
 * the mingo specs use into a fresh database and runs the same assertions through the real driver,
 * including what mingo cannot check: $lookup with let + pipeline, $dateTrunc time zones, explain.
 * Without the variable the suite is skipped and says so.
 */
import { MongoClient, type Db } from 'mongodb';
import { createMongoDataPathProvider } from 'nestjs-parse-agent/data/mongo/create-mongo-data-path';
import type { MongoDatabaseLike } from 'nestjs-parse-agent/data/mongo/mongo-driver';
import { validatePipeline } from 'nestjs-parse-agent/security/pipeline/pipeline-validator';
import type { PipelinePolicy } from 'nestjs-parse-agent/security/pipeline/pipeline-policy';
import { buildParseMongoFixture, readableBy } from '../fixtures/parse-mongo-fixture';

const uri = process.env.TEST_MONGODB_URI;
const describeMongo = uri ? describe : describe.skip;
if (!uri) {
  process.stdout.write(
    'skipped: no TEST_MONGODB_URI (direct MongoDB path against a real server)\n',
  );
}

const acme: PipelinePolicy = {
  assertClassReadable: () => undefined,
  allowedFields: () => undefined,
  scopeMatches: (c) => (c === 'Order' || c === 'Customer' ? [{ orgId: 'acme' }] : []),
  pointerTargets: (c): Record<string, string> => (c === 'Order' ? { customer: 'Customer' } : {}),
};
const ALICE = ['*', 'u_alice', 'role:staff'];

describeMongo('direct MongoDB path on a real MongoDB (TEST_MONGODB_URI)', () => {
  const fixture = buildParseMongoFixture();
  let client: MongoClient;
  let db: Db;
  const dbName = `parse_agent_test_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    client = new MongoClient(uri as string);
    await client.connect();
    db = client.db(dbName);
    for (const [name, docs] of Object.entries(fixture.collections)) {
      // Parse stores string _ids; the driver's typing expects ObjectId by default.
      await db.collection<Record<string, unknown>>(name).insertMany(docs as never[]);
    }
  });
  afterAll(async () => {
    await db?.dropDatabase();
    await client?.close();
  });

  const path = (identity: { aclUser?: string; aclRole?: string }) =>
    createMongoDataPathProvider(
      {},
      { request: async () => ({}) as never },
      async () => db as unknown as MongoDatabaseLike,
    ).bind({
      agentId: 'real',
      permissions: 'readonly',
      authType: identity.aclUser ? 'acl_user' : identity.aclRole ? 'acl_role' : 'master_key',
      usingMasterKey: !identity.aclUser && !identity.aclRole,
      ...identity,
    });

  it('alice never sees globex rows through aggregate, group_by-style pipelines or $lookup', async () => {
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
        { $limit: 1000 },
      ],
      acme,
    );
    const rows = await path({ aclUser: 'u_alice' }).aggregate('Order', validated.pipeline);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.orgId).toBe('acme');
      expect((row.buyer as { orgId: string }).orgId).toBe('acme');
      expect(row).not.toHaveProperty('secretNote');
    }
    const expected = fixture.collections.Order.filter(
      (o) => o.orgId === 'acme' && readableBy(o, ALICE),
    ).length;
    const counted = await path({ aclUser: 'u_alice' }).aggregate(
      'Order',
      validatePipeline('Order', [{ $group: { _id: null, n: { $sum: 1 } } }], acme).pipeline,
    );
    expect(counted).toEqual([{ _id: null, n: expected }]);
  });

  it('buckets by day in a time zone and explains with a plan', async () => {
    const validated = validatePipeline(
      'Order',
      [
        {
          $group: {
            _id: { $dateTrunc: { date: '$createdAt', unit: 'day', timezone: 'America/New_York' } },
            n: { $sum: 1 },
          },
        },
        { $limit: 500 },
      ],
      acme,
    );
    const rows = await path({}).aggregate('Order', validated.pipeline);
    expect(rows.reduce((s, r) => s + (r.n as number), 0)).toBe(
      fixture.collections.Order.filter((o) => o.orgId === 'acme').length,
    );
    const plan = await path({}).explain('Order', { where: { status: 'paid' } });
    expect(plan.collectionScan).toBe(true); // the fixture has no index on status
  });
});
