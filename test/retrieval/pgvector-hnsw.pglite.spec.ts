import type { Pool } from 'pg';
import { LocalLexicalEmbedder } from 'nestjs-parse-agent';
import type { AgentIdentity } from 'nestjs-parse-agent/core/agent-identity';
import { PostgresDataAccess } from 'nestjs-parse-agent/data/postgres/postgres-data-access';
import { PostgresDataPath } from 'nestjs-parse-agent/data/postgres/postgres-data-path';
import { cosine } from 'nestjs-parse-agent/retrieval/score-quantize';
import { approximationOf } from 'nestjs-parse-agent/tools/builtin/search/semantic-search.tool';
import { prng, startPgliteVectorServer, type PgliteVectorServer } from './retrieval-fixtures';

/**
 * The pgvector SQL against a REAL pgvector: PGlite (PostgreSQL compiled to WebAssembly) with the
 * pgvector extension, served over the PostgreSQL wire protocol by pglite-socket to the `pg` driver.
 * Tables are created in Parse's layout directly (no Parse Server runs on PGlite). The HNSW answer
 * must reach recall@10 >= 0.95 against the exact answer over the rows the identity may read, and
 * never return a row it may not read.
 */
const DIMS = 64;
const DOCS = 1500;
/** The recall test's ef_search: well under the chunk count, so the walk cannot visit them all. */
const WALK_WIDTH = 40;
const CLASS = 'Doc';
const WORDS = (
  'refund invoice billing charge card payment login password reset account locked email shipping ' +
  'delivery late parcel courier address damaged broken screen battery charger warranty repair ' +
  'replacement order cancel subscription renewal discount coupon price slow crash error update'
).split(' ');

const identity = (aclUser: string): AgentIdentity => ({
  agentId: `pgv-${aclUser}`,
  permissions: 'readonly',
  authType: 'acl_user',
  usingMasterKey: false,
  aclUser,
});

/** How many scans the HNSW index has served (statistics flushed first). */
let hnswScans: () => Promise<number>;

describe('semantic_search SQL on pgvector (PGlite + pgvector over the wire, HNSW cosine)', () => {
  let server: PgliteVectorServer | undefined;
  let pool: Pool;
  let access: PostgresDataAccess;
  const embedder = new LocalLexicalEmbedder({ dimensions: DIMS });
  const texts = new Map<string, { text: string; reader: string }>();

  beforeAll(async () => {
    server = await startPgliteVectorServer();
    pool = server.pool;
    // Parse's layout: _SCHEMA, the class table with _rperm, the role tables principals read.
    await pool.query(
      `CREATE TABLE "_SCHEMA" ("className" varchar(120) PRIMARY KEY, "schema" jsonb, "isParseClass" bool)`,
    );
    await pool.query(`CREATE TABLE "_Role" ("objectId" text PRIMARY KEY, "name" text)`);
    await pool.query(`CREATE TABLE "_Join:users:_Role" ("relatedId" text, "owningId" text)`);
    await pool.query(`CREATE TABLE "_Join:roles:_Role" ("relatedId" text, "owningId" text)`);
    const fields = {
      objectId: { type: 'String' },
      createdAt: { type: 'Date' },
      updatedAt: { type: 'Date' },
      ACL: { type: 'ACL' },
      body: { type: 'String' },
      status: { type: 'String' },
    };
    await pool.query(`INSERT INTO "_SCHEMA" VALUES ($1, $2, true)`, [
      CLASS,
      JSON.stringify({ className: CLASS, fields, classLevelPermissions: {} }),
    ]);
    await pool.query(
      `CREATE TABLE "${CLASS}" ("objectId" text PRIMARY KEY, "createdAt" timestamptz, "updatedAt" timestamptz, "_rperm" text[], "_wperm" text[], "body" text, "status" text)`,
    );
    hnswScans = async () => {
      await pool.query('SELECT pg_stat_force_next_flush()');
      await pool.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await pool.query(
        `SELECT coalesce(sum(idx_scan), 0)::int AS n FROM pg_stat_user_indexes WHERE indexrelname = 'parse_agent_embeddings_hnsw'`,
      );
      return Number(rows[0].n);
    };
    access = new PostgresDataAccess({ pool, statementTimeoutMs: 60_000 });
    const record = await access.embeddings.prepare(embedder.model, DIMS);
    expect(record.storage).toBe('pgvector');
    const rand = prng(3);
    for (let i = 0; i < DOCS; i++) {
      const id = `d${String(i).padStart(5, '0')}`;
      const words = Array.from(
        { length: 4 + Math.floor(rand() * 12) },
        () => WORDS[Math.floor(rand() * WORDS.length)],
      );
      const text = words.join(' ');
      const reader = rand() < 0.6 ? 'alice' : 'bob';
      texts.set(id, { text, reader });
      await pool.query(`INSERT INTO "${CLASS}" VALUES ($1, now(), now(), $2, $2, $3, $4)`, [
        id,
        [reader],
        text,
        rand() < 0.5 ? 'open' : 'closed',
      ]);
      await access.embeddings.replace(CLASS, id, 'body', 'h', [
        { index: 0, start: 0, end: text.length, vector: embedder.vector(text) },
      ]);
    }
  }, 300_000);

  // The recall test turns sorting off on the pool's only connection: back on after it, pass or fail.
  afterEach(async () => {
    await pool?.query('RESET enable_sort');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('creates the HNSW cosine index on the side table', async () => {
    const { rows } = await pool.query(
      `SELECT indexdef FROM pg_indexes WHERE tablename = 'parse_agent_embeddings'`,
    );
    expect(rows.map((r) => r.indexdef).join(' ')).toMatch(
      /USING hnsw \(embedding vector_cosine_ops\)/,
    );
  });

  it('reaches recall@10 >= 0.95 against the exact answer, over the rows the identity may read only', async () => {
    const rand = prng(11);
    // A walk that cannot visit every chunk (ef_search 40 over 1,500), and sorting off for this
    // connection (the pool's only one), so the planner walks the index instead of answering with
    // an exact sort; the index's scan count proves each query walked it.
    const narrow = new PostgresDataAccess({
      pool,
      statementTimeoutMs: 60_000,
      vectors: { efSearch: WALK_WIDTH },
    });
    const path = new PostgresDataPath(narrow, identity('alice'));
    await pool.query('SET enable_sort = off');
    const scansBefore = await hnswScans();
    let hits = 0;
    let wanted = 0;
    let queries = 0;
    for (let q = 0; q < 25; q++) {
      const query = Array.from(
        { length: 1 + Math.floor(rand() * 3) },
        () => WORDS[Math.floor(rand() * WORDS.length)],
      ).join(' ');
      const qv = embedder.vector(query);
      const where = q % 3 === 0 ? { status: 'open' } : undefined;
      const result = await path.vectorSearch(CLASS, {
        field: 'body',
        vector: qv,
        k: 10,
        maxChunksPerDocument: 1,
        ...(where ? { where } : {}),
      });
      queries += 1;
      expect(result.method).toBe('hnsw');
      expect(result.searchWidth).toBe(WALK_WIDTH);
      for (const row of result.rows) expect(texts.get(String(row.objectId))?.reader).toBe('alice');
      const allowed = [...texts.entries()].filter(([, t]) => t.reader === 'alice');
      const statuses = where
        ? new Set(
            (await pool.query(`SELECT "objectId" FROM "${CLASS}" WHERE status = 'open'`)).rows.map(
              (r) => r.objectId as string,
            ),
          )
        : undefined;
      const exact = allowed
        .filter(([id]) => !statuses || statuses.has(id))
        .map(([id, t]) => ({ id, score: cosine(qv, embedder.vector(t.text)) }))
        .sort((a, b) => b.score - a.score);
      // Ties at the 10th score: any of the tied documents counts as a hit.
      const tenth = exact[Math.min(9, exact.length - 1)]?.score ?? 0;
      const acceptable = new Set(exact.filter((e) => e.score >= tenth - 1e-6).map((e) => e.id));
      const got = result.rows.map((r) => String(r.objectId));
      wanted += Math.min(10, exact.length);
      hits += got.filter((id) => acceptable.has(id)).length;
    }
    expect((await hnswScans()) - scansBefore).toBeGreaterThanOrEqual(queries);
    expect(hits / wanted).toBeGreaterThanOrEqual(0.95);
  }, 120_000);

  it("walks pgvector's ceiling (ef_search 1000) when postgres.vectors.efSearch is unset", async () => {
    const path = new PostgresDataPath(access, identity('alice'));
    const result = await path.vectorSearch(CLASS, {
      field: 'body',
      vector: embedder.vector('refund invoice'),
      k: 10,
      maxChunksPerDocument: 1,
    });
    expect(result.searchWidth).toBe(1000);
  });

  it('sets hnsw.ef_search to postgres.vectors.efSearch, never below the chunks asked for', async () => {
    // The real pool, its clients' queries recorded on the way to PGlite.
    const widths: string[] = [];
    const recording = {
      query: (text: string, values?: unknown[]) => pool.query(text, values),
      end: async () => undefined,
      connect: async () => {
        const client = await pool.connect();
        return {
          query: async (text: string, values?: unknown[]) => {
            if (text.includes('hnsw.ef_search')) widths.push(String(values?.[0]));
            return client.query(text, values);
          },
          release: (error?: Error | boolean) => client.release(error),
        };
      },
    };
    const narrow = new PostgresDataAccess({
      pool: recording as never,
      statementTimeoutMs: 60_000,
      vectors: { efSearch: 64 },
    });
    const path = new PostgresDataPath(narrow, identity('alice'));
    const vector = embedder.vector('refund invoice');
    const small = await path.vectorSearch(CLASS, {
      field: 'body',
      vector,
      k: 5,
      maxChunksPerDocument: 1,
    });
    expect(small.searchWidth).toBe(64);
    // 20 documents x 5 chunks: the walk is widened to the 100 chunks asked for.
    const wide = await path.vectorSearch(CLASS, {
      field: 'body',
      vector,
      k: 20,
      maxChunksPerDocument: 5,
    });
    expect(wide.searchWidth).toBe(100);
    expect(widths).toEqual(['64', '100']);
    for (const row of [...small.rows, ...wide.rows]) {
      expect(texts.get(String(row.objectId))?.reader).toBe('alice');
    }
  }, 60_000);

  it('tells the agent an hnsw answer is approximate, with the width it used, and an exact one is not', () => {
    expect(approximationOf('hnsw', 1000)).toEqual({
      approximate: true,
      ef_search: 1000,
      search_note: expect.stringMatching(
        /^Approximate nearest-neighbour search \(pgvector HNSW, ef_search 1000\)/,
      ),
    });
    expect(approximationOf('atlas', undefined)).toMatchObject({ approximate: true });
    expect(approximationOf('exact', undefined)).toEqual({ approximate: false });
    expect(approximationOf('bounded', undefined)).toEqual({ approximate: false });
  });

  it('walks postgres.vectors.candidates chunks before ranking them exactly, never fewer than asked for', async () => {
    const vector = embedder.vector('refund invoice');
    const walked = (candidates?: number) =>
      new PostgresDataPath(
        new PostgresDataAccess({
          pool,
          statementTimeoutMs: 60_000,
          vectors: candidates ? { candidates } : {},
        }),
        identity('alice'),
      ).vectorSearch(CLASS, { field: 'body', vector, k: 10, maxChunksPerDocument: 2 });
    // Unset: the search width (efSearch, 1000 by default).
    expect((await walked()).walkedChunks).toBe(1000);
    expect((await walked(1500)).walkedChunks).toBe(1500);
    // Never fewer than the chunks asked for.
    expect((await walked(5)).walkedChunks).toBe(20);
    for (const candidates of [0, 100_001, 2.5, Number.NaN]) {
      expect(() => new PostgresDataAccess({ pool, vectors: { candidates } })).toThrow(
        /postgres\.vectors\.candidates must be an integer from 1 to 100000/,
      );
    }
  });

  it('refuses an efSearch pgvector would not accept, naming the option', () => {
    for (const efSearch of [0, 1001, 2.5, Number.NaN]) {
      expect(() => new PostgresDataAccess({ pool, vectors: { efSearch } })).toThrow(
        /postgres\.vectors\.efSearch must be an integer from 1 to 1000/,
      );
    }
  });

  it('builds the HNSW index with postgres.vectors.hnsw when prepare() creates it; refuses values pgvector would not accept', async () => {
    const indexDef = async () =>
      (
        await pool.query(
          `SELECT indexdef FROM pg_indexes WHERE indexname = 'parse_agent_embeddings_hnsw'`,
        )
      ).rows.map((r) => String(r.indexdef));
    expect((await indexDef())[0]).not.toMatch(/ef_construction/);
    await pool.query('DROP INDEX parse_agent_embeddings_hnsw');
    const tuned = new PostgresDataAccess({
      pool,
      vectors: { hnsw: { m: 24, efConstruction: 80 } },
    });
    await tuned.embeddings.prepare(embedder.model, DIMS);
    const [def] = await indexDef();
    expect(def).toMatch(
      /USING hnsw \(embedding vector_cosine_ops\) WITH \(m='?24'?, ef_construction='?80'?\)/,
    );
    for (const hnsw of [
      { m: 1 },
      { m: 101 },
      { efConstruction: 20 },
      { m: 24, efConstruction: 40 },
    ]) {
      expect(() => new PostgresDataAccess({ pool, vectors: { hnsw } })).toThrow(
        /postgres\.vectors\.hnsw\.(m|efConstruction) must be an integer/,
      );
    }
  }, 120_000);
});
