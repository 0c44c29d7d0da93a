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
// and the backfill rate (SearchIndexer.indexRows with the local lexical embedder, 512 dimensions,
// rows of ~60 words). Tables are created in Parse's layout directly; no Parse Server runs.
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

const SIZES = SMOKE
  ? [300]
  : [setting('BENCH_SEM_SMALL', 10_000, 300), setting('BENCH_SEM_LARGE', 100_000, 300)];
const REPEAT = setting('BENCH_SEM_REPEAT', 40, 3);
const BACKFILL_ROWS = setting('BENCH_SEM_BACKFILL', 2_000, 100);
const PGVECTOR_MAX = setting('BENCH_SEM_PGVECTOR_MAX', 100_000, 300);
/** maintenance_work_mem for the HNSW build: the graph of 100,000 vectors of 512 floats fits. */
const HNSW_BUILD_MEMORY = process.env.BENCH_SEM_HNSW_MEMORY || '1GB';
const CLASS = 'BenchTicket';
const WORDS = (
  'refund invoice billing charge card payment login password reset account locked email shipping ' +
  'delivery late parcel courier address damaged broken screen battery charger warranty repair ' +
  'replacement order cancel subscription renewal discount coupon price slow crash error update ' +
  'install sync calendar export report dashboard tent backpack lantern stove jacket zipper seam'
).split(' ');

class BenchTicket {}
lib.ParseClass(CLASS)(BenchTicket);
lib.AgentVisible()(BenchTicket);
lib.AgentSearchable({ fields: ['body'], filterFields: ['status'] })(BenchTicket);

function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const text = (rand, n) =>
  Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');

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

/** Rows and their vectors, loaded in multi-row INSERTs (the backfill rate is measured apart). */
async function load(pool, access, embedder, from, to, storage) {
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
      // About two rows in three readable by the bench's user.
      readers.push(i % 3 === 2 ? 'other' : 'reader');
      bodies.push(body);
      statuses.push(i % 2 ? 'open' : 'closed');
      const v = embedder.vector(body);
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

async function timeQueries(access, embedder) {
  const path_ = new PostgresDataPath(access, {
    agentId: 'bench',
    permissions: 'readonly',
    authType: 'acl_user',
    usingMasterKey: false,
    aclUser: 'reader',
  });
  const rand = prng(99);
  const times = [];
  let method;
  for (let q = 0; q < REPEAT + 3; q++) {
    const vector = embedder.vector(text(rand, 3));
    const started = process.hrtime.bigint();
    const result = await path_.vectorSearch(CLASS, {
      field: 'body',
      vector,
      k: 5,
      maxChunksPerDocument: 3,
      ...(q % 2 ? { where: { status: 'open' } } : {}),
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
    p50_ms: +percentile(times, 50).toFixed(1),
    p99_ms: +percentile(times, 99).toFixed(1),
  };
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
  let loaded = 0;
  for (const size of sizes) {
    const started = Date.now();
    let index_s;
    if (storage === 'pgvector') {
      // Inserting into an HNSW index row by row costs ~19 ms a vector in PGlite: load the rows
      // first, then build the index once (the same index prepare() creates), in memory.
      await pool.query(`DROP INDEX IF EXISTS parse_agent_embeddings_hnsw`);
      await load(pool, access, embedder, loaded, size, storage);
      const built = Date.now();
      await pool.query(`SET maintenance_work_mem = '${HNSW_BUILD_MEMORY}'`);
      await pool.query(
        `CREATE INDEX parse_agent_embeddings_hnsw ON parse_agent_embeddings USING hnsw (embedding vector_cosine_ops)`,
      );
      await pool.query(`RESET maintenance_work_mem`);
      index_s = +((Date.now() - built) / 1000).toFixed(1);
    } else {
      await load(pool, access, embedder, loaded, size, storage);
    }
    loaded = size;
    access.invalidate();
    const timed = await timeQueries(access, embedder);
    out.push({
      path: label,
      rows: size,
      load_s: +((Date.now() - started) / 1000).toFixed(1),
      ...(index_s !== undefined ? { index_s } : {}),
      // The 1-minute load average after the queries: the machine is shared.
      load_avg: +os.loadavg()[0].toFixed(1),
      ...timed,
    });
    process.stderr.write(
      `${label} ${size} rows loaded in ${out.at(-1).load_s} s${index_s !== undefined ? ` (HNSW build ${index_s} s)` : ''}\n`,
    );
    process.stderr.write(`${label} ${size} rows: p50 ${timed.p50_ms} ms, p99 ${timed.p99_ms} ms\n`);
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
    const exact = await run('exact', pool, 'array', SIZES, embedder);
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
      dimensions: embedder.dimensions,
      results: [...exact.out, ...hnsw.out],
      backfill,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
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
