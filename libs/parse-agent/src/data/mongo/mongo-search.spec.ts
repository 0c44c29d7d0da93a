/**
 * Atlas Search on the direct MongoDB path, checked without Atlas (none can run here). Two parts:
 * the pipelines are asserted as construction (`$search` first, then the identity's guards before
 * anything else reads the documents, no `$searchMeta`), and their semantics after `$search` are run
 * with mingo over the Parse-on-Mongo storage fixture. For that second part a STAND-IN replaces the
 * `$search` stage with a case-insensitive substring match and the score with a constant: it says
 * nothing about Atlas's ranking, only that what follows `$search` keeps the identity's scope.
 */
import { Aggregator, Query } from 'mingo';
import {
  buildParseMongoFixture,
  readableBy,
} from '../../../../../test/fixtures/parse-mongo-fixture';
import { AgentValidationError } from '../../core/errors';
import type { AgentIdentity } from '../../core/agent-identity';
import type { SearchSpec } from '../../ports/data-path';
import { createMongoDataPathProvider } from './create-mongo-data-path';
import type { MongoDatabaseLike, MongoDoc } from './mongo-driver';
import type { MongoDataPath } from './mongo-data-path';
import { SEARCH_SCORE_FIELD, searchPipeline, searchStage } from './mongo-search';
import type { MongoClassSource } from './mongo-pipeline';

const fixture = buildParseMongoFixture();
const C = fixture.collections;

/** The stand-in for Atlas: `$search` becomes a substring match, the score a constant 1. */
function withoutAtlas(pipeline: MongoDoc[]): MongoDoc[] {
  const [search, score, ...rest] = pipeline;
  const spec = search.$search as Record<string, Record<string, unknown>>;
  const op = spec.text ?? spec.autocomplete;
  const paths = ([] as string[]).concat(op.path as string | string[]);
  const pattern = new RegExp(String(op.query).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  expect(score).toEqual({ $addFields: { [SEARCH_SCORE_FIELD]: { $meta: 'searchScore' } } });
  return [
    { $match: { $or: paths.map((p) => ({ [p]: { $regex: pattern } })) } },
    { $addFields: { [SEARCH_SCORE_FIELD]: 1 } },
    ...rest,
  ];
}

function database(ran: MongoDoc[][]): MongoDatabaseLike {
  const resolver = (name: string) => C[name] ?? [];
  return {
    collection: (name) => ({
      aggregate: (pipeline) => {
        ran.push(pipeline);
        return {
          toArray: async () =>
            new Aggregator(withoutAtlas(pipeline), { collectionResolver: resolver }).run(
              resolver(name),
            ) as MongoDoc[],
          close: async () => undefined,
        };
      },
      // Principal lookups (users, roles and their join tables) read with find.
      find: (filter, options) => ({
        toArray: async () =>
          new Query(filter).find(resolver(name), options?.projection).all() as MongoDoc[],
        close: async () => undefined,
      }),
    }),
  };
}

const noParse = {
  request: async () => {
    throw new Error('no Parse REST in this spec');
  },
};

function path(identity: Partial<AgentIdentity>, ran: MongoDoc[][] = []): MongoDataPath {
  const provider = createMongoDataPathProvider({}, noParse, async () => database(ran));
  return provider.bind({
    agentId: 'spec',
    permissions: 'readonly',
    authType: identity.aclUser ? 'acl_user' : identity.aclRole ? 'acl_role' : 'master_key',
    usingMasterKey: !identity.aclUser && !identity.aclRole,
    ...identity,
  });
}

const text = (over: Partial<SearchSpec> = {}): SearchSpec => ({
  mode: 'text',
  index: 'default',
  query: 'customer',
  paths: ['name'],
  limit: 50,
  ...over,
});

const ALICE_READS = ['*', 'u_alice', 'role:staff'];

describe('Atlas Search pipelines (construction)', () => {
  const source: MongoClassSource = {
    schema: {
      className: 'Customer',
      fields: { name: { type: 'String' }, orgId: { type: 'String' }, rank: { type: 'Number' } },
    },
    guards: [{ $match: { _rperm: { $in: ['*'] } } }],
    view: { $project: { _id: 0, objectId: '$_id', name: 1, orgId: 1, rank: 1 } },
  };

  it('puts $search first and the identity guards before any other stage reads documents', () => {
    const pipeline = searchPipeline(text({ where: { orgId: 'acme' } }), source);
    expect(pipeline[0]).toEqual({
      $search: { index: 'default', text: { query: 'customer', path: 'name' } },
    });
    expect(pipeline[1]).toEqual({
      $addFields: { [SEARCH_SCORE_FIELD]: { $meta: 'searchScore' } },
    });
    expect(pipeline[2]).toEqual(source.guards[0]);
    expect(pipeline[3]).toEqual({ $match: { orgId: 'acme' } });
    expect(pipeline[4]).toEqual({
      $project: { _id: 0, objectId: '$_id', name: 1, orgId: 1, rank: 1, [SEARCH_SCORE_FIELD]: 1 },
    });
    expect(pipeline.at(-1)).toEqual({ $limit: 50 });
    expect(JSON.stringify(pipeline)).not.toContain('$searchMeta');
  });

  it('builds text over several fields, autocomplete over one, with fuzzy matching', () => {
    expect(searchStage(text({ paths: ['name', 'orgId'], fuzzyMaxEdits: 1 }))).toEqual({
      $search: {
        index: 'default',
        text: { query: 'customer', path: ['name', 'orgId'], fuzzy: { maxEdits: 1 } },
      },
    });
    expect(searchStage(text({ mode: 'autocomplete', query: 'cust', index: 'names' }))).toEqual({
      $search: { index: 'names', autocomplete: { query: 'cust', path: 'name' } },
    });
  });

  it('counts facets from the guarded rows with $facet, never from Atlas counts', () => {
    const pipeline = searchPipeline(text({ facets: { fields: ['orgId'], limit: 5 } }), source);
    const facet = pipeline.at(-1)!.$facet as Record<string, MongoDoc[]>;
    expect(facet.hits).toEqual([{ $limit: 50 }]);
    expect(facet.f0).toEqual([
      { $match: { orgId: { $exists: true } } },
      { $sortByCount: '$orgId' },
      { $limit: 5 },
    ]);
    // The guards come before the $facet.
    expect(pipeline.indexOf(source.guards[0])).toBeLessThan(pipeline.length - 1);
  });

  it.each([
    [
      { paths: ['secret'] },
      /Field 'secret' cannot be searched: it does not exist or this agent may not read it/,
    ],
    [{ paths: ['rank'] }, /'rank' is Number: full-text search reads String fields only/],
    [{ paths: [] }, /at least one field/],
    [{ mode: 'autocomplete' as const, paths: ['name', 'orgId'] }, /exactly one field/],
    [{ query: '  ' }, /query must be a non-empty string/],
    [{ index: 'x y' }, /index must name an Atlas Search index/],
    [{ index: { $ne: 1 } as unknown as string }, /index must name an Atlas Search index/],
    [{ fuzzyMaxEdits: 3 as 2 }, /max_edits must be 1 or 2/],
    [{ limit: 0 }, /limit must be a positive integer/],
    [{ keys: ['secret'] }, /'secret' does not exist or this agent may not read it/],
    [
      { facets: { fields: ['secret'], limit: 3 } },
      /'secret' does not exist or this agent may not read it/,
    ],
  ])('refuses %j with a message that says what to fix', (over, message) => {
    expect(() => searchPipeline(text(over), source)).toThrow(AgentValidationError);
    expect(() => searchPipeline(text(over), source)).toThrow(message);
  });
});

describe('Atlas Search on the MongoDB path (mingo after a stand-in $search)', () => {
  it('is served only when the operator says the cluster has Atlas Search (mongo.atlasSearch)', () => {
    const plain = createMongoDataPathProvider({}, noParse, async () => database([]));
    expect(plain.refusal('search')).toMatch(/set mongo.atlasSearch to true/);
    expect(plain.refusal('aggregate')).toBeUndefined();
    const atlas = createMongoDataPathProvider({ atlasSearch: true }, noParse, async () =>
      database([]),
    );
    expect(atlas.refusal('search')).toBeUndefined();
  });

  it('returns only the rows the identity may read, best first, with their score', async () => {
    const ran: MongoDoc[][] = [];
    const result = await path({ aclUser: 'u_alice' }, ran).search('Customer', text());
    const expected = C.Customer.filter((d) => readableBy(d, ALICE_READS)).map((d) => d._id);
    expect(result.rows.map((r) => r.row.objectId).sort()).toEqual([...expected].sort());
    expect(result.rows.length).toBe(8);
    // Customers c2, c5, c8 and c11 are bob's only.
    expect(result.rows.map((r) => r.row.objectId)).not.toEqual(expect.arrayContaining(['c2']));
    expect(result.rows.every((r) => r.score === 1)).toBe(true);
    expect(result.rows.every((r) => !(SEARCH_SCORE_FIELD in r.row))).toBe(true);
    // The guard (the _rperm match) sits right after $search and the score.
    expect(ran[0][2]).toEqual({
      $match: { $or: [{ _rperm: { $in: ALICE_READS } }, { _rperm: { $exists: false } }] },
    });
  });

  it('facet counts cover only readable rows (Atlas $searchMeta would count all twelve)', async () => {
    const result = await path({ aclUser: 'u_alice' }).search(
      'Customer',
      text({ facets: { fields: ['orgId'], limit: 10 } }),
    );
    const counts = Object.fromEntries(result.facets!.orgId.map((f) => [f.value, f.count]));
    expect(counts).toEqual({ acme: 4, globex: 4 });
    expect(result.rows).toHaveLength(8);
  });

  it('applies the policy where after the search (a tenant scope)', async () => {
    const result = await path({ aclUser: 'u_alice' }).search(
      'Customer',
      text({ where: { orgId: 'acme' }, keys: ['name'] }),
    );
    expect(result.rows.map((r) => r.row.objectId).sort()).toEqual(['c0', 'c10', 'c4', 'c6']);
    expect(result.rows.every((r) => !('orgId' in r.row) && !('email' in r.row))).toBe(true);
  });

  it('a protected field can be searched only by whom it is not protected from', async () => {
    await expect(
      path({ aclUser: 'u_alice' }).search(
        'Order',
        text({ paths: ['secretNote'], query: 'secret-1' }),
      ),
    ).rejects.toThrow(/'secretNote' cannot be searched/);
    const manager = await path({ aclUser: 'u_carol' }).search(
      'Order',
      text({ paths: ['secretNote'], query: 'secret-12', limit: 500 }),
    );
    expect(manager.rows.length).toBeGreaterThan(0);
    expect(manager.rows.every((r) => String(r.row.secretNote).includes('secret-12'))).toBe(true);
  });

  it('refuses a where with Parse-only operators, as the other reads do', async () => {
    await expect(
      path({ aclUser: 'u_alice' }).search(
        'Customer',
        text({ where: { name: { $inQuery: { className: 'Order', where: {} } } } }),
      ),
    ).rejects.toThrow(/\$inQuery/);
  });
});
