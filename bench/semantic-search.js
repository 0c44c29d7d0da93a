#!/usr/bin/env node
'use strict';
// `npm run bench:semantic`: semantic_search's database work (PostgresDataPath.vectorSearch for an
// aclUser identity: row ACL, CLP and a where applied before ranking, then the parent rows) on a
// class of 10,000 and 100,000 rows, p50/p99 over BENCH_SEM_REPEAT queries:
//   exact    embedded PostgreSQL, real[] vectors, an exact cosine scan in SQL
//   pgvector PGlite (PostgreSQL in WebAssembly) with pgvector, HNSW cosine (a child process;
//            WebAssembly is slower than a native server: read these as an upper bound). The rows
//            are loaded first and the index built once after each size (BENCH_SEM_HNSW_MEMORY,
//            maintenance_work_mem for the build, default 1GB): inserting into the index row by
//            row costs ~19 ms a vector there.
// On the pgvector path every timed query is asked again (after the timing) with k = 10 and one
// chunk a document, and its ids are compared with the exact top 10 over the same vectors and the
// same reader's rows (row ACL and the where), computed here in JavaScript from the vectors loaded:
// recall@10, mean and min per size, for each `postgres.vectors.candidates` setting in
// BENCH_SEM_CANDIDATES (comma-separated, `default` for unset; default `default`). Where the planner
// answered those queries without the index (an exact plan, usual at 10,000 rows), they are asked
// again with sorting disabled so the HNSW index is walked: recall is always the index walk's. The
// run fails if a size's mean (first setting) is below BENCH_SEM_MIN_RECALL (default 0.95).
// The text is bench/lib/ticket-corpus.js's (BENCH_SEM_CORPUS: topics, the default, or uniform).
// Also the backfill rate (SearchIndexer.indexRows with the local lexical embedder, 512
// dimensions). Tables are created in Parse's layout directly; no Parse Server runs.
const { spawn } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');
const { Pool } = require('pg');
// The built library of this tree (what 'nestjs-parse-agent' resolves to in the repository).
const lib = require('../libs/parse-agent/dist/index');
const {
  PostgresDataAccess,
} = require('../libs/parse-agent/dist/data/postgres/postgres-data-access');
const { PostgresDataPath } = require('../libs/parse-agent/dist/data/postgres/postgres-data-path');
const { MetadataRegistry } = require('../libs/parse-agent/dist/metadata/metadata-registry');
const { startEmbeddedPostgres } = require('../dist/src/embedded/embedded-postgres');
const { SMOKE, setting, check } = require('./lib/smoke');
const { ticketCorpus, prng } = require('./lib/ticket-corpus');

const SIZES = SMOKE
  ? [300]
  : [setting('BENCH_SEM_SMALL', 10_000, 300), setting('BENCH_SEM_LARGE', 100_000, 300)];
const REPEAT = setting('BENCH_SEM_REPEAT', 40, 3);
const BACKFILL_ROWS = setting('BENCH_SEM_BACKFILL', 2_000, 100);
const PGVECTOR_MAX = setting('BENCH_SEM_PGVECTOR_MAX', 100_000, 300);
const EXACT_MAX = setting('BENCH_SEM_EXACT_MAX', 100_000, 300);
const MIN_RECALL = setting('BENCH_SEM_MIN_RECALL', 0.95, 0.95);
/** `vectors.candidates` settings whose recall is measured: `default` (unset) and numbers. */
const CANDIDATES = (process.env.BENCH_SEM_CANDIDATES || 'default')
  .split(',')
  .map((c) => (c.trim() === 'default' ? 'default' : Number(c)));
/** Optional HNSW build parameters (unset: pgvector's defaults, as prepare() creates the index). */
const HNSW_WITH = [
  ['m', process.env.BENCH_SEM_HNSW_M],
  ['ef_construction', process.env.BENCH_SEM_HNSW_EF_CONSTRUCTION],
]
  .filter(([, v]) => v)
  .map(([k, v]) => `${k} = ${Number(v)}`);
/** maintenance_work_mem for the HNSW build: the graph of 100,000 vectors of 512 floats fits. */
const HNSW_BUILD_MEMORY = process.env.BENCH_SEM_HNSW_MEMORY || '1GB';
const CLASS = 'BenchTicket';
/** The text the tickets and queries are made of (bench/lib/ticket-corpus.js). */
const CORPUS = ticketCorpus(process.env.BENCH_SEM_CORPUS || 'topics');

class BenchTicket {}
lib.ParseClass(CLASS)(BenchTicket);
lib.AgentVisible()(BenchTicket);
lib.AgentSearchable({ fields: ['body'], filterFields: ['status'] })(BenchTicket);

/** Row i's reader (about two rows in three readable by the bench's user) and status. */
const readerOf = (i) => (i % 3 === 2 ? 'other' : 'reader');
const statusOf = (i) => (i % 2 ? 'open' : 'closed');
const OPEN = { status: 'open' };

const text = (rand, n) => CORPUS.text(rand, n);

async function parseLayout(pool) {
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
}

/**
 * Rows and their vectors, loaded in multi-row INSERTs (the backfill rate is measured apart).
 * `truth`, when given, keeps each row's vector as stored (float32) for the exact answer.
 */
async function load(pool, access, embedder, from, to, storage, truth) {
  const rand = prng(from + 1);
  const BATCH = 500;
  for (let start = from; start < to; start += BATCH) {
    const ids = [];
    const readers = [];
    const bodies = [];
    const statuses = [];
    const vectors = [];
    for (let i = start; i < Math.min(to, start + BATCH); i++) {
      const id = `t${String(i).padStart(7, '0')}`;
      const body = text(rand, 20 + Math.floor(rand() * 60));
      ids.push(id);
      readers.push(readerOf(i));
      bodies.push(body);
      statuses.push(statusOf(i));
      const v = embedder.vector(body);
      truth?.push(Float32Array.from(v));
      vectors.push(storage === 'pgvector' ? `[${v.join(',')}]` : `{${v.join(',')}}`);
    }
    await pool.query(
      `INSERT INTO "${CLASS}" SELECT id, now(), now(), ARRAY[r], ARRAY[r], b, s FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(id, r, b, s)`,
      [ids, readers, bodies, statuses],
    );
    await pool.query(
      `INSERT INTO parse_agent_embeddings (class_name, field, object_id, chunk, chunk_start, chunk_end, source_hash, embedding)
       SELECT $1, 'body', id, 0, 0, 1, 'bench', v::${storage === 'pgvector' ? 'vector' : 'real[]'} FROM unnest($2::text[], $3::text[]) AS u(id, v)`,
      [CLASS, ids, vectors],
    );
  }
  await pool.query('ANALYZE');
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const readerPath = (access) =>
  new PostgresDataPath(access, {
    agentId: 'bench',
    permissions: 'readonly',
    authType: 'acl_user',
    usingMasterKey: false,
    aclUser: 'reader',
  });

async function timeQueries(access, embedder) {
  const path_ = readerPath(access);
  const rand = prng(99);
  const times = [];
  const queries = [];
  let method;
  for (let q = 0; q < REPEAT + 3; q++) {
    const vector = embedder.vector(CORPUS.query(rand));
    const where = q % 2 ? OPEN : undefined;
    queries.push({ vector, where });
    const started = process.hrtime.bigint();
    const result = await path_.vectorSearch(CLASS, {
      field: 'body',
      vector,
      k: 5,
      maxChunksPerDocument: 3,
      ...(where ? { where } : {}),
    });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    check(result.rows.length === 5, `5 documents, got ${result.rows.length}`);
    check(
      result.rows.every((r) => Number(String(r.objectId).slice(1)) % 3 !== 2),
      'a row the reader may not read came back',
    );
    method = result.method;
    if (q >= 3) times.push(ms); // three warm-up queries
  }
  times.sort((a, b) => a - b);
  return {
    method,
    queries,
    p50_ms: +percentile(times, 50).toFixed(1),
    p99_ms: +percentile(times, 99).toFixed(1),
  };
}

/**
 * The exact top 10 of the reader's rows (row ACL, and the where when given) by cosine against the
 * stored float32 vectors: every row scored, nothing skipped. Ties at the 10th score: every tied
 * row is acceptable. Returns the acceptable ids and how many hits a perfect answer has.
 */
function exactTop10(truth, query, where) {
  const q = Float32Array.from(query);
  let qq = 0;
  for (let d = 0; d < q.length; d++) qq += q[d] * q[d];
  const ids = [];
  const scores = [];
  for (let i = 0; i < truth.length; i++) {
    if (readerOf(i) !== 'reader' || (where && statusOf(i) !== where.status)) continue;
    const v = truth[i];
    let dot = 0;
    let vv = 0;
    for (let d = 0; d < v.length; d++) {
      dot += v[d] * q[d];
      vv += v[d] * v[d];
    }
    ids.push(i);
    scores.push(vv && qq ? dot / Math.sqrt(vv * qq) : 0);
  }
  const sorted = Float64Array.from(scores).sort();
  const wanted = Math.min(10, sorted.length);
  const tenth = sorted[sorted.length - wanted];
  // pgvector sums in float32: a row within 1e-5 of the 10th score is a tie.
  const acceptable = new Set(
    ids.filter((_, n) => scores[n] >= tenth - 1e-5).map((i) => `t${String(i).padStart(7, '0')}`),
  );
  return { acceptable, wanted };
}

/** recall@10 of the pgvector path for each timed query, asked again untimed with k = 10. */
async function recallAt10(access, truth, queries) {
  const path_ = readerPath(access);
  const recalls = [];
  const times = [];
  for (const { vector, where } of queries) {
    const started = process.hrtime.bigint();
    const result = await path_.vectorSearch(CLASS, {
      field: 'body',
      vector,
      k: 10,
      maxChunksPerDocument: 1,
      ...(where ? { where } : {}),
    });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    const { acceptable, wanted } = exactTop10(truth, vector, where);
    const got = new Set(result.rows.map((r) => String(r.objectId)));
    check(
      [...got].every((id) => {
        const i = Number(id.slice(1));
        return readerOf(i) === 'reader' && (!where || statusOf(i) === where.status);
      }),
      'the recall query returned a row the reader may not read or the where excludes',
    );
    const hits = [...got].filter((id) => acceptable.has(id)).length;
    recalls.push(wanted ? Math.min(hits, wanted) / wanted : 1);
  }
  const mean = recalls.reduce((a, b) => a + b, 0) / recalls.length;
  times.sort((a, b) => a - b);
  return {
    recall10_mean: +mean.toFixed(4),
    recall10_min: +Math.min(...recalls).toFixed(2),
    recall_queries: recalls.length,
    k10_p50_ms: +percentile(times, 50).toFixed(1),
    k10_p99_ms: +percentile(times, 99).toFixed(1),
  };
}

/**
 * recall@10 for each `vectors.candidates` setting asked for (BENCH_SEM_CANDIDATES, `default` for
 * unset), with the HNSW index scans the queries took. Where the planner answered without the index
 * (an exact plan: recall 1 by construction, reported as planner_recall10_mean), the queries are
 * asked again with sorting disabled so the index is walked, and that walk's recall is the figure.
 */
async function recallOfWalks(pool, access, truth, queries) {
  const out = [];
  for (const setting of CANDIDATES) {
    const variant =
      setting === 'default'
        ? access
        : new PostgresDataAccess({
            pool,
            statementTimeoutMs: 600_000,
            vectors: { pgvector: 'on', candidates: setting },
          });
    const before = await hnswScans(pool);
    let recall = await recallAt10(variant, truth, queries);
    recall.index_scans = (await hnswScans(pool)) - before;
    if (recall.index_scans < recall.recall_queries) {
      const planner = recall.recall10_mean;
      await pool.query('SET enable_sort = off');
      const forced = await hnswScans(pool);
      recall = { ...(await recallAt10(variant, truth, queries)), planner_recall10_mean: planner };
      recall.index_scans = (await hnswScans(pool)) - forced;
      recall.forced_index = true;
      await pool.query('RESET enable_sort');
    }
    out.push({ candidates: setting, ...recall });
  }
  return out;
}

/** How many scans the HNSW index has served (pg_stat_user_indexes, this session's counts flushed). */
async function hnswScans(pool) {
  await pool.query('SELECT pg_stat_force_next_flush()');
  await pool.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await pool.query(
    `SELECT coalesce(sum(idx_scan), 0)::int AS n FROM pg_stat_user_indexes WHERE indexrelname = 'parse_agent_embeddings_hnsw'`,
  );
  return rows[0].n;
}

function startPglite() {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(__dirname, '../test/retrieval/pglite-pgvector-server.cjs')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening (\S+)/.exec(out);
      if (match) resolve({ child, conn: match[1] });
    });
    child.on('exit', (code) => reject(new Error(`the PGlite server exited with ${code}`)));
  });
}

async function run(label, pool, storage, sizes, embedder) {
  const access = new PostgresDataAccess({
    pool,
    statementTimeoutMs: 600_000,
    vectors: { pgvector: storage === 'pgvector' ? 'on' : 'off' },
  });
  await parseLayout(pool);
  const record = await access.embeddings.prepare(embedder.model, embedder.dimensions);
  check(record.storage === storage, `${label}: storage ${record.storage}, wanted ${storage}`);
  const out = [];
  const truth = storage === 'pgvector' ? [] : undefined;
  let loaded = 0;
  for (const size of sizes) {
    const started = Date.now();
    let index_s;
    if (storage === 'pgvector') {
      // Inserting into an HNSW index row by row costs ~19 ms a vector in PGlite: load the rows
      // first, then build the index once (the same index prepare() creates), in memory.
      await pool.query(`DROP INDEX IF EXISTS parse_agent_embeddings_hnsw`);
      await load(pool, access, embedder, loaded, size, storage, truth);
      const built = Date.now();
      await pool.query(`SET maintenance_work_mem = '${HNSW_BUILD_MEMORY}'`);
      await pool.query(
        `CREATE INDEX parse_agent_embeddings_hnsw ON parse_agent_embeddings USING hnsw (embedding vector_cosine_ops)` +
          (HNSW_WITH.length ? ` WITH (${HNSW_WITH.join(', ')})` : ''),
      );
      await pool.query(`RESET maintenance_work_mem`);
      index_s = +((Date.now() - built) / 1000).toFixed(1);
    } else {
      await load(pool, access, embedder, loaded, size, storage);
    }
    loaded = size;
    access.invalidate();
    const { queries, ...timed } = await timeQueries(access, embedder);
    let recall = {};
    if (truth) {
      const [first, ...others] = await recallOfWalks(pool, access, truth, queries);
      recall = { ...first, ...(others.length ? { variants: others } : {}) };
    }
    out.push({
      path: label,
      rows: size,
      load_s: +((Date.now() - started) / 1000).toFixed(1),
      ...(index_s !== undefined ? { index_s } : {}),
      // The 1-minute load average after the queries: the machine is shared.
      load_avg: +os.loadavg()[0].toFixed(1),
      ...timed,
      ...recall,
    });
    process.stderr.write(
      `${label} ${size} rows loaded in ${out.at(-1).load_s} s${index_s !== undefined ? ` (HNSW build ${index_s} s)` : ''}\n`,
    );
    process.stderr.write(
      `${label} ${size} rows: p50 ${timed.p50_ms} ms, p99 ${timed.p99_ms} ms` +
        (truth
          ? [recall, ...(recall.variants ?? [])]
              .map(
                (r) =>
                  `, candidates ${r.candidates}: recall@10 mean ${r.recall10_mean}, min ${r.recall10_min}` +
                  ` (k=10 p50 ${r.k10_p50_ms} ms${r.forced_index ? ', index forced' : ''})`,
              )
              .join('')
          : '') +
        '\n',
    );
  }
  return { out, access };
}

async function backfillRate(pool, access, embedder) {
  const metadata = new MetadataRegistry().register(BenchTicket);
  const indexer = new lib.SearchIndexer(metadata, embedder, access.embeddings);
  const rand = prng(7);
  const rows = Array.from({ length: BACKFILL_ROWS }, (_, i) => ({
    objectId: `b${String(i).padStart(7, '0')}`,
    body: text(rand, 40 + Math.floor(rand() * 80)),
  }));
  const started = Date.now();
  let chunks = 0;
  for (let i = 0; i < rows.length; i += 100) {
    chunks += (await indexer.indexRows(CLASS, rows.slice(i, i + 100), { skipUnchanged: false }))
      .chunks;
  }
  const seconds = (Date.now() - started) / 1000;
  return {
    rows: rows.length,
    chunks,
    seconds: +seconds.toFixed(2),
    rows_per_second: Math.round(rows.length / seconds),
  };
}

async function main() {
  const embedder = new lib.LocalLexicalEmbedder();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'parse-agent-bench-sem-'));
  fs.chmodSync(tmp, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), fast: true });
  const pool = new Pool({ connectionString: pg.uri, max: 4 });
  // The server stopping at the end closes idle connections: not an error of the bench.
  pool.on('error', () => undefined);
  let pglite;
  let vpool;
  try {
    const exact = await run(
      'exact',
      pool,
      'array',
      SIZES.filter((s) => s <= EXACT_MAX),
      embedder,
    );
    const backfill = await backfillRate(pool, exact.access, embedder);
    process.stderr.write(`backfill: ${backfill.rows_per_second} rows/s\n`);
    pglite = await startPglite();
    const [host, port] = pglite.conn.split(':');
    vpool = new Pool({ host, port: Number(port), user: 'postgres', database: 'postgres', max: 1 });
    vpool.on('error', () => undefined);
    const hnsw = await run(
      'pgvector',
      vpool,
      'pgvector',
      SIZES.filter((s) => s <= PGVECTOR_MAX),
      embedder,
    );
    const out = {
      smoke: SMOKE,
      corpus: CORPUS.name,
      dimensions: embedder.dimensions,
      results: [...exact.out, ...hnsw.out],
      backfill,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
    // Checked after the figures are written, so a long run that misses still shows its numbers.
    for (const r of hnsw.out) {
      for (const v of [r, ...(r.variants ?? [])]) {
        // Without this a planner that chose a sequential scan would score a trivial recall of 1.
        check(
          v.index_scans >= v.recall_queries,
          `pgvector ${r.rows} rows, candidates ${v.candidates}: the HNSW index served ${v.index_scans} scans for ${v.recall_queries} queries`,
        );
      }
      check(
        r.recall10_mean >= MIN_RECALL,
        `pgvector ${r.rows} rows: mean recall@10 ${r.recall10_mean} < ${MIN_RECALL}`,
      );
    }
  } finally {
    await pool.end().catch(() => undefined);
    await vpool?.end().catch(() => undefined);
    pglite?.child.kill('SIGTERM');
    await pg.stop().catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${e?.stack ?? e}\n`);
    process.exit(1);
  },
);
