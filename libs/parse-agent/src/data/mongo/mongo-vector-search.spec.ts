/**
 * Atlas Vector Search on the direct MongoDB path, checked WITHOUT MongoDB: no MongoDB server, and
 * no Atlas cluster, can run here. Two parts: the built pipelines are asserted as construction over
 * generated identities and where clauses (`$vectorSearch` first, the tenant constraint always in
 * its pre-filter, the identity's `_rperm` match right after, underscore keys and non-filter fields
 * never in the pre-filter); and the stages after `$vectorSearch` are run with mingo over the
 * Parse-on-Mongo storage fixture, a STAND-IN replacing `$vectorSearch` by its pre-filter (mingo)
 * and a brute-force cosine ranking. The stand-in says nothing about Atlas's approximate ranking,
 * only that what follows it keeps the identity's scope.
 */
import { Aggregator, Query } from 'mingo';
import {
  buildParseMongoFixture,
  readableBy,
} from '../../../../../test/fixtures/parse-mongo-fixture';
import { AgentValidationError } from '../../core/errors';
import type { VectorSearchSpec } from '../../ports/data-path';
import { createMongoDataPathProvider } from './create-mongo-data-path';
import type { MongoDatabaseLike, MongoDoc } from './mongo-driver';
import type { MongoClassSource } from './mongo-pipeline';
import {
  VECTOR_SCORE_FIELD,
  vectorPrefilter,
  vectorSearchPipeline,
  type AtlasVectorIndex,
} from './mongo-vector-search';

const INDEX: AtlasVectorIndex = { index: 'vectors' };

/** A small deterministic generator (mulberry32), so failures replay. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const spec = (over: Partial<VectorSearchSpec> = {}): VectorSearchSpec => ({
  field: 'name',
  vector: [1, 0, 0],
  k: 5,
  maxChunksPerDocument: 1,
  ...over,
});

const source: MongoClassSource = {
  schema: {
    className: 'Customer',
    fields: { name: { type: 'String' }, orgId: { type: 'String' }, rank: { type: 'Number' } },
  },
  guards: [
    { $match: { $or: [{ _rperm: { $in: ['*', 'u_x'] } }, { _rperm: { $exists: false } }] } },
  ],
  view: { $project: { _id: 0, objectId: '$_id', name: 1, orgId: 1, rank: 1 } },
};

describe('Atlas $vectorSearch pipelines (construction, generated inputs)', () => {
  const next = random(35);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const clauses: Array<() => MongoDoc> = [
    () => ({ rank: { $gte: Math.floor(next() * 10) } }),
    () => ({ rank: pick([1, 2, 3]) }),
    () => ({ status: pick(['open', 'paid']) }),
    () => ({ name: { $regex: '^C' } }),
    () => ({ $or: [{ rank: 1 }, { orgId: 'globex' }] }),
    () => ({ _rperm: { $in: ['*'] } }),
    () => ({ rank: { $in: [1, 2] } }),
    () => ({ createdAt: { $gt: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' } } }),
  ];

  for (let run = 0; run < 60; run++) {
    const tenant = pick(['acme', 'globex']);
    const guardUser = pick(['u_alice', 'u_bob', 'u_carol', 'role:staff']);
    const parts = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(clauses)());
    const where: MongoDoc =
      next() < 0.5
        ? { $and: [...parts, { orgId: tenant }] }
        : Object.assign({}, ...parts.filter((p) => !('$or' in p)), { orgId: tenant });
    const guarded: MongoClassSource = {
      ...source,
      guards: [
        {
          $match: { $or: [{ _rperm: { $in: ['*', guardUser] } }, { _rperm: { $exists: false } }] },
        },
      ],
    };
    it(`run ${run}: tenant in the pre-filter, ACL match right after, nothing internal pre-filtered`, () => {
      const pipeline = vectorSearchPipeline(spec({ where }), guarded, INDEX, {
        tenantField: 'orgId',
        filterFields: ['rank', 'status'],
      });
      const stage = pipeline[0].$vectorSearch as MongoDoc;
      expect(Object.keys(pipeline[0])).toEqual(['$vectorSearch']);
      expect(stage.index).toBe('vectors');
      expect(stage.path).toBe('nameEmbedding');
      const filter = stage.filter as MongoDoc;
      const conjuncts = (filter.$and as MongoDoc[] | undefined) ?? [filter];
      expect(conjuncts).toContainEqual({ orgId: { $eq: tenant } });
      const named = JSON.stringify(filter);
      expect(named).not.toMatch(/"_/);
      expect(named).not.toContain('name');
      expect(named).not.toContain('$or');
      for (const c of conjuncts) expect(['orgId', 'rank', 'status']).toContain(Object.keys(c)[0]);
      expect(pipeline[1]).toEqual({
        $addFields: { [VECTOR_SCORE_FIELD]: { $meta: 'vectorSearchScore' } },
      });
      expect(pipeline[2]).toBe(guarded.guards[0]);
      // The whole where runs again after the guards (pre-filtering is for recall, not for scope).
      expect(JSON.stringify(pipeline.slice(3))).toContain(tenant);
      expect(pipeline.at(-1)).toEqual({ $limit: 5 });
      expect(pipeline.at(-2)!.$project).toBeDefined();
      expect(pipeline.filter((s) => '$vectorSearch' in s)).toHaveLength(1);
    });
  }

  it('refuses a tenant-scoped search whose tenant constraint cannot be pre-filtered', () => {
    expect(() =>
      vectorPrefilter({ rank: 1 }, { tenantField: 'orgId', filterFields: ['rank'] }),
    ).toThrow(/tenant constraint on 'orgId'/);
    expect(() =>
      vectorPrefilter({ orgId: { $regex: 'ac' } }, { tenantField: 'orgId', filterFields: [] }),
    ).toThrow(AgentValidationError);
  });

  it.each([['_rperm'], ['_p_customer'], ['a.b'], ['$where']])(
    'refuses %s as a pre-filter field',
    (field) => {
      expect(() => vectorPrefilter({ [field]: 'x' }, { filterFields: [field] })).toThrow(
        /internal and nested names are refused/,
      );
    },
  );

  it('leaves non-filter fields out of the pre-filter (they run after the guards)', () => {
    expect(vectorPrefilter({ name: 'x', email: 'y', rank: 2 }, { filterFields: ['rank'] })).toEqual(
      { rank: { $eq: 2 } },
    );
    expect(vectorPrefilter({ name: 'x' }, { filterFields: ['rank'] })).toBeUndefined();
  });

  it.each([
    [{ index: 'x y' }, spec(), /must name an Atlas Vector Search index/],
    [INDEX, spec({ k: 0 }), /k must be a positive integer/],
    [INDEX, spec({ field: 'email' }), /'email' does not exist or this agent may not read it/],
    [INDEX, spec({ keys: ['secret'] }), /'secret' does not exist/],
    [INDEX, spec({ mode: 'hybrid' }), /'hybrid' is not served on MongoDB/],
    [{ index: 'v', path: () => '_hidden' }, spec(), /atlasVectorSearch.path gave '_hidden'/],
  ])('refuses %j / %j clearly', (index, s, message) => {
    expect(() => vectorSearchPipeline(s, source, index, { filterFields: [] })).toThrow(message);
  });
});

// ---- The stages after $vectorSearch, run with mingo over the storage fixture ----

const fixture = buildParseMongoFixture();
const C = fixture.collections;
const vectorOf = (i: number): number[] => {
  const v = [Math.cos(i), Math.sin(i), (i % 5) / 5];
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const customers: Array<MongoDoc & { nameEmbedding: number[] }> = C.Customer.map((d, i) => ({
  ...d,
  nameEmbedding: vectorOf(i),
}));
const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

/** The stand-in for Atlas: the pre-filter with mingo, then exact cosine, best first. */
function withoutAtlas(docs: MongoDoc[], pipeline: MongoDoc[]): MongoDoc[] {
  const [search, , ...rest] = pipeline;
  const s = search.$vectorSearch as MongoDoc;
  const pool = s.filter ? new Query(s.filter as MongoDoc).find(docs).all() : docs;
  const scored = (pool as MongoDoc[])
    .map((d) => ({
      ...d,
      [VECTOR_SCORE_FIELD]: cosine(d[s.path as string] as number[], s.queryVector as number[]),
    }))
    .sort((a, b) => (b[VECTOR_SCORE_FIELD] as number) - (a[VECTOR_SCORE_FIELD] as number))
    .slice(0, s.limit as number);
  return new Aggregator(rest).run(scored) as MongoDoc[];
}

function database(): MongoDatabaseLike {
  const resolver = (name: string) => (name === 'Customer' ? customers : (C[name] ?? []));
  return {
    collection: (name) => ({
      aggregate: (pipeline) => ({
        toArray: async () =>
          '$vectorSearch' in pipeline[0]
            ? withoutAtlas(resolver(name), pipeline)
            : (new Aggregator(pipeline, { collectionResolver: resolver }).run(
                resolver(name),
              ) as MongoDoc[]),
        close: async () => undefined,
      }),
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

describe('Atlas Vector Search on the MongoDB path (mingo after a stand-in $vectorSearch)', () => {
  it('is refused, naming the option, unless mongo.atlasVectorSearch names an index', async () => {
    const plain = createMongoDataPathProvider({}, noParse, async () => database());
    expect(plain.refusal('vector_search')).toMatch(/set mongo.atlasVectorSearch to \{ index:/);
    await expect(
      plain
        .bind({
          agentId: 's',
          permissions: 'readonly',
          authType: 'master_key',
          usingMasterKey: true,
        })
        .vectorSearch('Customer', spec()),
    ).rejects.toThrow(/mongo.atlasVectorSearch/);
    const atlas = createMongoDataPathProvider({ atlasVectorSearch: INDEX }, noParse, async () =>
      database(),
    );
    expect(atlas.refusal('vector_search')).toBeUndefined();
  });

  it.each([
    ['u_alice', ['*', 'u_alice', 'role:staff'], 'acme'],
    ['u_carol', ['*', 'u_carol', 'role:manager', 'role:staff'], 'acme'],
    ['u_alice', ['*', 'u_alice', 'role:staff'], 'globex'],
  ])(
    '%s gets only readable rows of its tenant, ranked like brute force',
    async (user, reads, tenant) => {
      const provider = createMongoDataPathProvider(
        { atlasVectorSearch: INDEX },
        noParse,
        async () => database(),
      );
      const path = provider.bind({
        agentId: 's',
        permissions: 'readonly',
        authType: 'acl_user',
        usingMasterKey: false,
        aclUser: user,
      });
      const query = vectorOf(3);
      const found = await path.vectorSearch(
        'Customer',
        spec({
          vector: query,
          k: 4,
          where: { orgId: tenant },
          prefilter: { tenantField: 'orgId', filterFields: [] },
        }),
      );
      const oracle = customers
        .filter((d) => d.orgId === tenant && readableBy(d, reads))
        .map((d) => ({ id: d._id, score: cosine(d.nameEmbedding, query) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 4);
      expect(found.method).toBe('atlas');
      expect(found.chunks.map((c) => c.objectId)).toEqual(oracle.map((o) => o.id));
      expect(found.chunks.map((c) => c.score)).toEqual(oracle.map((o) => o.score));
      for (const row of found.rows) {
        expect(row.orgId).toBe(tenant);
        expect(row).not.toHaveProperty('nameEmbedding');
        expect(row).not.toHaveProperty('_rperm');
        expect(row).not.toHaveProperty(VECTOR_SCORE_FIELD);
      }
      // Rows of the tenant this user may not read exist, and none comes back.
      const hidden = new Set(
        customers.filter((d) => d.orgId === tenant && !readableBy(d, reads)).map((d) => d._id),
      );
      expect(hidden.size).toBeGreaterThan(0);
      expect(found.rows.filter((r) => hidden.has(r.objectId))).toEqual([]);
    },
  );
});
