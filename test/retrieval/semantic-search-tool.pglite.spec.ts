import { Pool } from 'pg';
import {
  AgentSearchable,
  AgentTenantScope,
  AgentVisible,
  LocalLexicalEmbedder,
  ParseClass,
  SearchIndexer,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { createRole, createUser, defineClass, type SeededUser } from '../harness/fixtures';
import { testParseConfig } from '../harness/parse-rest';
import { prng, startPgliteVectorServer, type PgliteVectorServer } from './retrieval-fixtures';

/**
 * The `semantic_search` TOOL end to end on a REAL pgvector: `agent.execute('semantic_search')` on
 * ParseAgents built by ParseAgentModule.forRoot (the harness's testing module), whose `postgres`
 * path is a `pg` pool connected to PGlite + pgvector (PostgreSQL in WebAssembly, served over the
 * wire protocol by pglite-socket; see pglite-pgvector-server.cjs).
 *
 * What runs for real: the module, the agent, the tool, the read policy (class gate, tenant scope,
 * where check), the PostgreSQL path's SQL (row ACL from `_rperm`, role expansion from `_Role` and
 * `_Join:users:_Role`, the HNSW walk with its filter), the library's SearchIndexer writing the
 * side table with LocalLexicalEmbedder, and the harness's Parse Server. No Parse Server runs on
 * PGlite; the agent still asks the harness's Parse Server for what only Parse REST gives it: the
 * class schemas behind the class gate (the class is defined there too, with no rows). Every row
 * and vector lives in PGlite only, and the identities (aclUser, master key) are ones the direct
 * path serves alone. The PGlite tables take the layout Parse Server itself gave them in the
 * harness's database (columns and the `_SCHEMA` entry copied), and the role rows are the ones Parse
 * wrote for a role it created.
 *
 * The oracle: an exact cosine top-k computed here from the vectors stored in PGlite, over the rows
 * the identity may read by the ACLs and tenants seeded here. The side table holds fewer chunks
 * than ef_search (1000, asserted), so the HNSW walk reaches every chunk and the tool's answer must
 * equal the exact one (ties at the k-th score allowed); pgvector-hnsw.pglite.spec.ts measures
 * recall where it cannot.
 */
const run = Date.now().toString(36);
const DOC = `PgvTool_${run}`;
const DIMS = 64;
const CHUNKING = { size: 200, overlap: 40, maxPerDocument: 4 };
/** Two scores this close are a tie (float4 vectors; pgvector sums in single precision). */
const TIE = 1e-4;

@ParseClass(DOC)
@AgentVisible()
@AgentTenantScope('tenant')
@AgentSearchable({ fields: ['body', 'title'], filterFields: ['status'], chunk: CHUNKING })
class PgvDoc {}

const VOCAB = (
  'refund invoice billing charge card payment login password reset account locked email ' +
  'shipping delivery late parcel courier address damaged broken screen battery charger ' +
  'warranty repair replacement order cancel subscription renewal discount coupon price ' +
  'slow crash error update install sync calendar export report dashboard'
).split(' ');
const STATUSES = ['open', 'closed', 'pending'];
/** Words only rows alice may never read carry: her search for them must come back without them. */
const BOB_WORD = 'bobmarker';
const GLOBEX_WORD = 'globexmarker';

function words(rand: () => number, count: number, marker?: string): string {
  return Array.from({ length: count }, () =>
    marker && rand() < 0.15 ? marker : VOCAB[Math.floor(rand() * VOCAB.length)],
  ).join(' ');
}

function cosineOf(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

interface Seeded {
  id: string;
  tenant: string;
  rperm: string[];
  status: string;
  title: string;
  body: string;
}

describe('semantic_search tool on pgvector (ParseAgent -> PostgreSQL path -> PGlite + pgvector)', () => {
  let server: PgliteVectorServer | undefined;
  let pool: Pool;
  let parseDb: Pool;
  let bed: AgentTestBed;
  let alice: SeededUser;
  let bob: SeededUser;
  const staffRole = `pgv_staff_${run}`;
  const embedder = new LocalLexicalEmbedder({ dimensions: DIMS });
  const seeded = new Map<string, Seeded>();
  /** field -> objectId -> chunk index -> stored vector (read back from PGlite). */
  const stored = new Map<string, Map<string, Map<number, number[]>>>();

  /** Creates `table` in PGlite with the columns Parse Server gave it in the harness's database. */
  async function copyLayout(table: string): Promise<string[]> {
    const { rows } = await parseDb.query(
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
         FROM pg_attribute a
        WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum`,
      [`"${table}"`],
    );
    if (!rows.length) throw new Error(`Parse Server created no table "${table}"`);
    const columns = rows.map((r) => `"${String(r.name)}" ${String(r.type)}`).join(', ');
    await pool.query(`CREATE TABLE IF NOT EXISTS "${table}" (${columns})`);
    return rows.map((r) => String(r.name));
  }

  /** Copies the rows of `table` that match `where` from the harness's database into PGlite. */
  async function copyRows(table: string, where: string, values: unknown[]): Promise<number> {
    const columns = await copyLayout(table);
    const { rows } = await parseDb.query(`SELECT * FROM "${table}" WHERE ${where}`, values);
    for (const row of rows) {
      const list = columns.map((c) => `"${c}"`).join(', ');
      const params = columns.map((_, i) => `$${i + 1}`).join(', ');
      await pool.query(
        `INSERT INTO "${table}" (${list}) VALUES (${params})`,
        // pg sends a jsonb value back as JSON text and a text[] as an array literal.
        columns.map((c) => row[c]),
      );
    }
    return rows.length;
  }

  beforeAll(async () => {
    server = await startPgliteVectorServer();
    pool = server.pool;
    parseDb = new Pool({ connectionString: testParseConfig().databaseURI, max: 1 });

    // Parse Server makes the class (no rows), the users and a role alice belongs to.
    alice = await createUser(`pgv_alice_${run}`);
    bob = await createUser(`pgv_bob_${run}`);
    await createRole(staffRole, { users: [alice.objectId] });
    await defineClass(DOC, {
      title: { type: 'String' },
      body: { type: 'String' },
      status: { type: 'String' },
      tenant: { type: 'String' },
      priority: { type: 'Number' },
    });
    // ...and PGlite gets Parse's layout of it: the tables, the _SCHEMA entry, the role's rows.
    expect(await copyRows('_SCHEMA', `"className" = $1`, [DOC])).toBe(1);
    const columns = await copyLayout(DOC);
    expect(columns).toEqual(expect.arrayContaining(['objectId', '_rperm', 'tenant', 'body']));
    const [role] = (
      await parseDb.query(`SELECT "objectId" FROM "_Role" WHERE name = $1`, [staffRole])
    ).rows;
    expect(await copyRows('_Role', `"objectId" = $1`, [role.objectId])).toBe(1);
    expect(await copyRows('_Join:users:_Role', `"owningId" = $1`, [role.objectId])).toBe(1);
    await copyLayout('_Join:roles:_Role');

    // Two tenants, two readers, a role and the public: every combination, so that the ACL and the
    // tenant scope are each the only thing between alice and some rows.
    const rand = prng(41);
    const kinds: Array<{ n: number; tenant: string; rperm: string[]; marker?: string }> = [
      { n: 70, tenant: 'acme', rperm: ['*'] },
      { n: 35, tenant: 'acme', rperm: [alice.objectId] },
      { n: 25, tenant: 'acme', rperm: [`role:${staffRole}`] },
      { n: 40, tenant: 'acme', rperm: [bob.objectId], marker: BOB_WORD },
      { n: 25, tenant: 'globex', rperm: [alice.objectId], marker: GLOBEX_WORD },
      { n: 45, tenant: 'globex', rperm: [bob.objectId], marker: GLOBEX_WORD },
      { n: 25, tenant: 'globex', rperm: ['*'], marker: GLOBEX_WORD },
    ];
    let n = 0;
    for (const kind of kinds) {
      for (let i = 0; i < kind.n; i++) {
        const row: Seeded = {
          id: `pgv${String(n++).padStart(4, '0')}`,
          tenant: kind.tenant,
          rperm: kind.rperm,
          status: STATUSES[Math.floor(rand() * STATUSES.length)],
          title: words(rand, 2 + Math.floor(rand() * 4), kind.marker),
          body: words(rand, 8 + Math.floor(rand() * 60), kind.marker) + '.',
        };
        seeded.set(row.id, row);
        await pool.query(
          `INSERT INTO "${DOC}" ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", title, body, status, tenant, priority)
           VALUES ($1, now(), now(), $2, $2, $3, $4, $5, $6, $7)`,
          [row.id, row.rperm, row.title, row.body, row.status, row.tenant, n % 5],
        );
      }
    }

    bed = await createAgentTestBed([PgvDoc], { postgres: { pool }, embeddings: embedder });
    // The library's indexer embeds the rows into PGlite's side table.
    const outcome = await bed.module.get(SearchIndexer).indexRows(
      DOC,
      [...seeded.values()].map((r) => ({ objectId: r.id, body: r.body, title: r.title })),
    );
    expect(outcome.embedded).toBe(2 * seeded.size);

    const { rows } = await pool.query(
      `SELECT object_id, field, chunk, embedding::text AS v FROM parse_agent_embeddings WHERE class_name = $1`,
      [DOC],
    );
    // Fewer chunks than ef_search: the HNSW walk reaches all of them (see the header).
    expect(rows.length).toBeLessThan(1000);
    for (const r of rows) {
      const byId = stored.get(r.field) ?? new Map<string, Map<number, number[]>>();
      stored.set(r.field, byId);
      const chunks = byId.get(r.object_id) ?? new Map<number, number[]>();
      byId.set(r.object_id, chunks);
      chunks.set(Number(r.chunk), JSON.parse(r.v) as number[]);
    }
  }, 120_000);

  afterAll(async () => {
    await bed?.close();
    await parseDb?.end();
    await server?.stop();
  });

  const search = (agent: ParseAgent, args: Record<string, unknown>) =>
    agent.execute('semantic_search', { class_name: DOC, ...args });

  /** What a principal set may read in a tenant (master: every row of the tenant). */
  const readable = (tenant: string, principals: string[] | 'master') =>
    new Set(
      [...seeded.values()]
        .filter(
          (r) =>
            r.tenant === tenant &&
            (principals === 'master' || r.rperm.some((p) => principals.includes(p))),
        )
        .map((r) => r.id),
    );

  /** Exact cosine of one stored chunk with the query vector. */
  const chunkScore = (field: string, id: string, chunk: number, q: number[]) =>
    cosineOf(stored.get(field)!.get(id)!.get(chunk)!, q);

  /** The allowed documents best first by their best chunk, scored from the stored vectors. */
  function exactRanking(field: string, allowed: Set<string>, q: number[]) {
    return [...stored.get(field)!]
      .filter(([id]) => allowed.has(id))
      .map(([id, chunks]) => ({
        id,
        best: Math.max(...[...chunks.values()].map((v) => cosineOf(v, q))),
      }))
      .sort((a, b) => b.best - a.best);
  }

  /**
   * The tool's answer against the exact top-k over `allowed`: the same documents (any of those tied
   * at the k-th score), every chunk one of theirs with its true score, quantized or exact.
   */
  function expectExactTopK(
    data: Data,
    args: { query: string; k: number; field: string; perDoc: number },
    allowed: Set<string>,
    quantized: boolean,
  ) {
    const q = embedder.vector(args.query).map((x) => Math.fround(x));
    const ranking = exactRanking(args.field, allowed, q);
    const chunks = data.chunks as Data[];
    const got = [...new Set(chunks.map((c) => c.object_id as string))];
    expect(got.length).toBe(Math.min(args.k, ranking.length));
    expect(data.count).toBe(chunks.length);
    // The documents map holds exactly the parents of the chunks.
    expect(Object.keys(data.documents).sort()).toEqual([...got].sort());
    if (!got.length) return;
    const kth = ranking[got.length - 1].best;
    const best = new Map(ranking.map((r) => [r.id, r.best]));
    for (const id of got) {
      expect(allowed.has(id)).toBe(true);
      expect(best.get(id)!).toBeGreaterThanOrEqual(kth - TIE);
      expect(data.documents[id][args.field]).toBeUndefined();
      expect(data.documents[id].tenant).toBe(seeded.get(id)!.tenant);
    }
    for (const r of ranking) if (r.best > kth + TIE) expect(got).toContain(r.id);
    const perDoc = new Map<string, number>();
    for (const c of chunks) {
      const truth = chunkScore(args.field, c.object_id, c.chunk, q);
      if (quantized) {
        expect(Math.round(c.score * 100)).toBeCloseTo(c.score * 100, 9);
        expect(Math.abs(c.score - truth)).toBeLessThanOrEqual(0.005 + TIE);
      } else {
        expect(c.score).toBeCloseTo(truth, 4);
      }
      // The content is that chunk's text: it embeds to the stored vector.
      const v = stored.get(args.field)!.get(c.object_id)!.get(c.chunk)!;
      expect(cosineOf(embedder.vector(c.content), v)).toBeGreaterThan(0.9999);
      expect(seeded.get(c.object_id)![args.field as 'body' | 'title']).toContain(c.content);
      perDoc.set(c.object_id, (perDoc.get(c.object_id) ?? 0) + 1);
    }
    for (const count of perDoc.values()) expect(count).toBeLessThanOrEqual(args.perDoc);
    // A document's first chunk is its best one.
    for (const id of got) {
      const first = chunks.find((c) => c.object_id === id)!;
      expect(Math.abs(first.score - best.get(id)!)).toBeLessThanOrEqual(
        quantized ? 0.005 + TIE : TIE,
      );
    }
  }

  function expectHnswEnvelope(data: Data) {
    expect(data.method).toBe('hnsw');
    expect(data.approximate).toBe(true);
    expect(data.ef_search).toBe(1000);
    expect(data.search_note).toMatch(/pgvector HNSW, ef_search 1000/);
  }

  /** Queries with their arguments, from a seed; `marker` words are mixed into some. */
  function queries(seed: number, count: number, markers: string[] = []) {
    const rand = prng(seed);
    return Array.from({ length: count }, (_, i) => {
      const parts = [words(rand, 1 + Math.floor(rand() * 4))];
      for (const m of markers) if (rand() < 0.5) parts.push(m);
      return {
        query: parts.join(' '),
        k: 1 + Math.floor(rand() * 20),
        field: i % 3 === 2 ? 'title' : 'body',
        perDoc: 1 + Math.floor(rand() * CHUNKING.maxPerDocument),
        status: i % 4 === 1 ? STATUSES[Math.floor(rand() * STATUSES.length)] : undefined,
      };
    });
  }

  const argsOf = (q: ReturnType<typeof queries>[number]) => ({
    query: q.query,
    k: q.k,
    text_field: q.field,
    max_chunks_per_document: q.perDoc,
    max_total_tokens: 0,
    ...(q.status ? { where: { status: q.status } } : {}),
  });

  const withStatus = (allowed: Set<string>, status: string | undefined) =>
    status ? new Set([...allowed].filter((id) => seeded.get(id)!.status === status)) : allowed;

  it("alice's answer equals the exact top-k over the rows her ACL, role and tenant let her read", async () => {
    const agent = bed.factory.create({ aclUser: alice.objectId, tenantId: 'acme' });
    const allowed = readable('acme', ['*', alice.objectId, `role:${staffRole}`]);
    expect(allowed.size).toBe(70 + 35 + 25);
    const forbidden = [...seeded.keys()].filter((id) => !allowed.has(id));
    for (const q of queries(7, 16, [BOB_WORD, GLOBEX_WORD])) {
      const data = ok(await search(agent, argsOf(q)));
      expectHnswEnvelope(data);
      expect(data.scores).toBe('quantized');
      expectExactTopK(data, q, withStatus(allowed, q.status), true);
      // Nothing of a row she may not read: no id, no marker word (the echoed query aside).
      const text = JSON.stringify({ ...data, query: undefined });
      for (const id of forbidden) expect(text).not.toContain(id);
      expect(text).not.toContain(BOB_WORD);
      expect(text).not.toContain(GLOBEX_WORD);
    }
  }, 60_000);

  it("bob's answer, in the other tenant, equals the exact top-k over his rows", async () => {
    const agent = bed.factory.create({ aclUser: bob.objectId, tenantId: 'globex' });
    const allowed = readable('globex', ['*', bob.objectId]);
    expect(allowed.size).toBe(45 + 25);
    const forbidden = [...seeded.keys()].filter((id) => !allowed.has(id));
    for (const q of queries(13, 8)) {
      const data = ok(await search(agent, argsOf(q)));
      expectHnswEnvelope(data);
      expect(data.scores).toBe('quantized');
      expectExactTopK(data, q, withStatus(allowed, q.status), true);
      const text = JSON.stringify(data);
      for (const id of forbidden) expect(text).not.toContain(id);
    }
  }, 60_000);

  it('gives exact scores to an admin-tier identity, and the master key every row of the tenant (the leak check can fail)', async () => {
    const aliceAdmin = bed.factory.create({
      aclUser: alice.objectId,
      tenantId: 'acme',
      permissions: 'admin',
    });
    const aliceRows = readable('acme', ['*', alice.objectId, `role:${staffRole}`]);
    for (const q of queries(21, 5)) {
      const data = ok(await search(aliceAdmin, argsOf(q)));
      expectHnswEnvelope(data);
      expect(data.scores).toBe('exact');
      expectExactTopK(data, q, withStatus(aliceRows, q.status), false);
    }
    const master = bed.factory.create({ tenantId: 'acme', permissions: 'admin' });
    const acme = readable('acme', 'master');
    for (const q of queries(23, 5, [BOB_WORD])) {
      const data = ok(await search(master, argsOf(q)));
      expectHnswEnvelope(data);
      expectExactTopK(data, q, withStatus(acme, q.status), false);
    }
    // The rows alice's search never shows are there to be found: the marker finds them.
    const data = ok(await search(master, { query: BOB_WORD, k: 5, text_field: 'body' }));
    expect(data.chunks.length).toBeGreaterThan(0);
    for (const c of data.chunks as Data[]) {
      expect(seeded.get(c.object_id)!.rperm).toEqual([bob.objectId]);
    }
  }, 60_000);

  it('refuses a where on a field that is not a filter field, naming the accepted ones', async () => {
    const agent = bed.factory.create({ aclUser: alice.objectId, tenantId: 'acme' });
    for (const where of [
      { tenant: 'globex' },
      { priority: 1 },
      { _rperm: { $in: [bob.objectId] } },
      { objectId: { $in: ['pgv0000'] } },
      { $or: [{ status: 'open' }, { tenant: 'globex' }] },
    ]) {
      const failure = refused(await search(agent, { query: 'refund', where }));
      expect(failure.error_code).toBe('invalid_argument');
      expect(failure.error).toContain("'status'");
    }
  });
});
