#!/usr/bin/env node
'use strict';
// `npm run bench:pg`: group_by on a class of 100,000 rows for a session-token user, three ways:
//   A. the direct PostgreSQL path (PostgresDataPath.groupBy: session resolved via /users/me and
//      cached, row ACL + CLP + protectedFields in SQL, read-only transaction, statement_timeout)
//   B. the only way without it: paging `query_class` over MCP (csv, 1,000 rows a page) and
//      grouping client-side
//   C. the hand-written SQL it compiles to, run straight on the database (the floor)
// then one aggregate pipeline per stage family ($addFields/$project expressions, $sortByCount,
// $bucket, $facet, $setWindowFields) through the same path against its hand-written SQL, each
// answer checked equal, and against paging the same rows through Parse REST (B above).
// Parse Server runs in its own process; the MCP app runs in this one.
require('reflect-metadata');
const { spawn } = require('node:child_process');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');
const express = require('express');
const { Client } = require('pg');
const { NestFactory } = require('@nestjs/core');
const { ExpressAdapter } = require('@nestjs/platform-express');
// Internal (not in the public entry point): the bench times the module's own direct path itself.
const { PARSE_AGENT_COMPOSITION } = require('../libs/parse-agent/dist/nest/parse-agent.constants');
const { Module } = require('@nestjs/common');
const lib = require('nestjs-parse-agent');
const { suppressSecurityBanners } = require('nestjs-parse-agent/ops');
const { KeyedSlidingWindowRateLimiter } = require('nestjs-parse-agent/stores');
const { startEmbeddedPostgres } = require('../dist/src/embedded/embedded-postgres');
const { findFreePort } = require('../dist/src/embedded/free-port');
const { SMOKE, setting, check } = require('./lib/smoke');

const ROWS = setting('BENCH_PG_ROWS', 100_000, 3_000);
// BENCH_PG_FAMILY=setWindowFields: only the stage families whose name contains it.
const FAMILY = process.env.BENCH_PG_FAMILY ?? '';
const REPEAT = setting('BENCH_PG_REPEAT', 30, 3);
const CLASS = 'BenchOrder';
const STATUSES = ['new', 'paid', 'shipped', 'void', 'returned'];

// The class is a registered model: unregistered classes are hidden from agents by default.
class BenchOrder {}
lib.ParseClass(CLASS)(BenchOrder);
lib.AgentVisible()(BenchOrder);
lib.AgentFields('status', 'amount', 'tenant')(BenchOrder);

/** What the seed gives the user, counted here (row i: status i % 5, hidden when i % 3 == 2). */
function expectedCounts() {
  const counts = {};
  for (let i = 1; i <= ROWS; i++) {
    if (i % 3 === 2) continue;
    const status = STATUSES[i % 5];
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

function startParse(databaseURI) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'parse-server.js')], {
      env: { ...process.env, BENCH_DATABASE_URI: databaseURI },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      const line = buffer.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) resolve({ child, info: JSON.parse(line) });
    });
    child.on('exit', (code) => reject(new Error(`parse-server.js exited with ${code}`)));
  });
}

async function rest(info, method, route, body, headers = {}) {
  const res = await fetch(info.serverURL + route, {
    method,
    headers: {
      'X-Parse-Application-Id': info.appId,
      'Content-Type': 'application/json',
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${route}: ${JSON.stringify(json)}`);
  return json;
}

function post(url, body, headers) {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': payload.length,
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function seed(info, db) {
  const user = await rest(info, 'POST', '/users', {
    username: 'bench-user',
    password: 'bench-password',
  });
  await rest(
    info,
    'POST',
    `/schemas/${CLASS}`,
    {
      className: CLASS,
      fields: {
        status: { type: 'String' },
        amount: { type: 'Number' },
        tenant: { type: 'String' },
      },
    },
    { 'X-Parse-Master-Key': info.masterKey },
  );
  // Parse's own layout, filled in one statement: a third public, a third the user's, a third
  // someone else's, so the ACL filter matters.
  await db.query(
    `INSERT INTO "${CLASS}" ("objectId", "createdAt", "updatedAt", "status", "amount", "tenant", "_rperm", "_wperm")
     SELECT substr(md5(i::text), 1, 10), now(), now(),
            ($3::text[])[1 + i % 5], (i * 37) % 101,
            CASE WHEN i % 2 = 0 THEN 'acme' ELSE 'globex' END,
            CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN ARRAY[$1::text] ELSE ARRAY['someoneElse'] END,
            ARRAY[]::text[]
     FROM generate_series(1, $2::int) AS i`,
    [user.objectId, ROWS, STATUSES],
  );
  await db.query(`ANALYZE "${CLASS}"`);
  return user;
}

async function startMcp(info, databaseURI) {
  suppressSecurityBanners();
  class BenchPgModule {}
  Module({
    imports: [
      lib.ParseAgentModule.forRoot({
        parse: { serverURL: info.serverURL, appId: info.appId, masterKey: info.masterKey },
        postgres: { uri: databaseURI },
        models: [BenchOrder],
        rateLimiter: new KeyedSlidingWindowRateLimiter(10_000_000, 60),
        agentFactory: (req) => ({ sessionToken: String(req.headers['x-session-token']) }),
        mcp: { path: '/mcp' },
      }),
    ],
  })(BenchPgModule);
  const root = express();
  const app = await NestFactory.create(BenchPgModule, new ExpressAdapter(root), {
    logger: ['error'],
  });
  const port = await findFreePort();
  await app.listen(port, '127.0.0.1');
  return { app, url: `http://127.0.0.1:${port}/mcp` };
}

async function timeIt(fn) {
  const times = [];
  let last;
  for (let i = 0; i < REPEAT; i++) {
    const t = process.hrtime.bigint();
    last = await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], min: times[0], last };
}

/**
 * Times several ways of answering the same question round by round, rotating which goes first,
 * so a change in the machine's load falls on all of them: on a shared machine, 30 runs of one and
 * then 30 of the other measured the load as much as the SQL.
 */
async function timeRounds(fns) {
  const times = fns.map(() => []);
  const last = [];
  for (let i = 0; i < REPEAT; i++) {
    for (let j = 0; j < fns.length; j++) {
      const k = (i + j) % fns.length;
      const t = process.hrtime.bigint();
      last[k] = await fns[k]();
      times[k].push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  return times.map((ts, k) => {
    ts.sort((x, y) => x - y);
    return { median: ts[Math.floor(ts.length / 2)], min: ts[0], last: last[k] };
  });
}

/**
 * The statement the direct path sends for `fn` on the bench class, read off the driver (not its
 * BEGIN, set_config or COMMIT): timed straight, it tells the SQL's cost from the path's own.
 */
async function sentSql(fn) {
  const { Client } = require('pg');
  const query = Client.prototype.query;
  const seen = [];
  Client.prototype.query = function (text, values, ...rest) {
    if (typeof text === 'string' && text.includes(`FROM "${CLASS}"`)) seen.push({ text, values });
    return query.call(this, text, values, ...rest);
  };
  try {
    await fn();
  } finally {
    Client.prototype.query = query;
  }
  check(seen.length === 1, `expected one statement on ${CLASS}, saw ${seen.length}`);
  return seen[0];
}

/** The tool result's JSON, without the untrusted-data wrapper around it (when there is one). */
function unwrap(text) {
  const m = /^[^\n]*\n<(untrusted-data-[0-9a-f]+)>\n([\s\S]*)\n<\/\1>$/.exec(text);
  return m ? m[2] : text;
}

async function pagedQueryClass(mcpUrl, token) {
  const groups = new Map();
  let rows = 0;
  let calls = 0;
  // Ordered by objectId so pages neither skip nor repeat a row; each page follows next_call (a page
  // holds what fits the result's byte budget, which may be fewer rows than asked for).
  let args = {
    class_name: CLASS,
    keys: ['status'],
    limit: 1000,
    skip: 0,
    order: 'objectId',
    format: 'csv',
  };
  for (;;) {
    const res = await post(
      mcpUrl,
      {
        jsonrpc: '2.0',
        id: ++calls,
        method: 'tools/call',
        params: { name: 'query_class', arguments: args },
      },
      { 'x-session-token': token },
    );
    if (!res.result || res.result.isError) {
      throw new Error(`query_class failed: ${JSON.stringify(res).slice(0, 500)}`);
    }
    const data = JSON.parse(unwrap(res.result.content[0].text));
    const payload = data.data ?? data;
    const text = String(payload.output);
    const statusCol = text.split('\n')[0].split(',').indexOf('status');
    check(statusCol >= 0, `query_class csv has no status column: ${text.slice(0, 200)}`);
    const lines = text.split('\n').slice(1).filter(Boolean);
    for (const line of lines) {
      const status = line.split(',')[statusCol];
      groups.set(status, (groups.get(status) ?? 0) + 1);
    }
    rows += lines.length;
    if (!payload.pagination?.has_more) break;
    check(
      payload.next_call && lines.length > 0,
      `has_more without next_call or rows: ${JSON.stringify(payload).slice(0, 300)}`,
    );
    args = payload.next_call.arguments;
  }
  return { groups, rows, calls };
}

/**
 * One pipeline per stage family, the SQL someone would write by hand for it, and how to read
 * both answers as the same `{ key: value }` map.
 */
function stageFamilies() {
  const acl = `("_rperm" IS NULL OR "_rperm" && $1::text[])`;
  const keyed = (rows, key, value) =>
    Object.fromEntries(
      rows.map((r) => [String(r[key]), Math.round(Number(r[value]) * 1000) / 1000]),
    );
  return [
    {
      name: '$addFields + $group (expressions)',
      pipeline: [
        { $addFields: { net: { $multiply: ['$amount', 0.8] }, big: { $gte: ['$amount', 50] } } },
        { $match: { big: true } },
        { $group: { _id: '$status', net: { $sum: '$net' } } },
      ],
      sql: `SELECT "status" AS k, sum("amount" * 0.8) AS v FROM "${CLASS}" WHERE ${acl} AND "amount" >= 50 GROUP BY 1`,
      pipelineAnswer: (rows) => keyed(rows, '_id', 'net'),
      sqlAnswer: (rows) => keyed(rows, 'k', 'v'),
    },
    {
      name: '$sortByCount',
      pipeline: [{ $sortByCount: '$tenant' }],
      sql: `SELECT "tenant" AS k, count(*) AS v FROM "${CLASS}" WHERE ${acl} GROUP BY 1 ORDER BY 2 DESC`,
      pipelineAnswer: (rows) => keyed(rows, '_id', 'count'),
      sqlAnswer: (rows) => keyed(rows, 'k', 'v'),
    },
    {
      name: '$bucket',
      pipeline: [
        { $bucket: { groupBy: '$amount', boundaries: [0, 25, 50, 75, 101], default: 'other' } },
      ],
      sql:
        `SELECT (ARRAY[0, 25, 50, 75])[width_bucket("amount", ARRAY[0, 25, 50, 75]::float8[])] AS k, count(*) AS v ` +
        `FROM "${CLASS}" WHERE ${acl} GROUP BY 1 ORDER BY 1`,
      pipelineAnswer: (rows) => keyed(rows, '_id', 'count'),
      sqlAnswer: (rows) => keyed(rows, 'k', 'v'),
    },
    {
      name: '$facet (two branches)',
      pipeline: [
        {
          $facet: {
            byStatus: [{ $group: { _id: '$status', n: { $sum: 1 } } }],
            total: [{ $group: { _id: null, amount: { $sum: '$amount' } } }],
          },
        },
      ],
      sql:
        `SELECT (SELECT json_object_agg(s, n) FROM (SELECT "status" AS s, count(*) AS n FROM "${CLASS}" WHERE ${acl} GROUP BY 1) x) AS by_status, ` +
        `(SELECT sum("amount") FROM "${CLASS}" WHERE ${acl}) AS total`,
      pipelineAnswer: (rows) => ({
        ...keyed(rows[0].byStatus, '_id', 'n'),
        total: Number(rows[0].total[0].amount),
      }),
      sqlAnswer: (rows) => ({
        ...Object.fromEntries(Object.entries(rows[0].by_status).map(([k, v]) => [k, Number(v)])),
        total: Number(rows[0].total),
      }),
    },
    {
      name: '$setWindowFields ($rank per partition)',
      pipeline: [
        { $match: { tenant: 'acme' } },
        {
          $setWindowFields: {
            partitionBy: '$status',
            sortBy: { amount: -1 },
            output: { rank: { $rank: {} } },
          },
        },
        { $match: { rank: 1 } },
        { $group: { _id: '$status', top: { $sum: 1 } } },
      ],
      sql:
        `SELECT s AS k, count(*) AS v FROM (SELECT "status" AS s, rank() OVER (PARTITION BY "status" ORDER BY "amount" DESC) AS r ` +
        `FROM "${CLASS}" WHERE ${acl} AND "tenant" = 'acme') x WHERE r = 1 GROUP BY 1`,
      pipelineAnswer: (rows) => keyed(rows, '_id', 'top'),
      sqlAnswer: (rows) => keyed(rows, 'k', 'v'),
    },
  ];
}

/** Each stage family: the direct path's pipeline against its hand-written SQL, answers checked. */
async function benchFamilies(path_, db, principals, pagedMedian) {
  const results = [];
  for (const family of stageFamilies().filter((f) => f.name.includes(FAMILY))) {
    const run = () => path_.aggregate(CLASS, family.pipeline);
    const sent = await sentSql(run);
    const [direct, straight, hand] = await timeRounds([
      run,
      async () => (await db.query(sent.text, sent.values)).rows,
      async () => (await db.query(family.sql, [principals])).rows,
    ]);
    const a = JSON.stringify(sortKeys(family.pipelineAnswer(direct.last)));
    const b = JSON.stringify(sortKeys(family.sqlAnswer(hand.last)));
    const c = JSON.stringify(sortKeys(family.pipelineAnswer(straight.last)));
    check(a === b, `${family.name}: the pipeline answered ${a}, the hand SQL ${b}`);
    check(a === c, `${family.name}: the path answered ${a}, its SQL sent straight ${c}`);
    results.push({
      family: family.name,
      directMs: +direct.median.toFixed(2),
      sentSqlMs: +straight.median.toFixed(2),
      handSqlMs: +hand.median.toFixed(2),
      vsHandSql: +(direct.median / hand.median).toFixed(2),
      sentVsHandSql: +(straight.median / hand.median).toFixed(2),
      vsPaging: +(pagedMedian / direct.median).toFixed(0),
    });
  }
  return results;
}

const sortKeys = (o) =>
  Object.fromEntries(Object.entries(o).sort(([x], [y]) => x.localeCompare(y)));

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'parse-agent-bench-pg-'));
  fs.chmodSync(tmp, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'pg'), fast: true });
  let parse;
  let mcp;
  const db = new Client({ connectionString: pg.uri });
  try {
    parse = await startParse(pg.uri);
    await db.connect();
    const user = await seed(parse.info, db);
    mcp = await startMcp(parse.info, pg.uri);

    // The path the module opened from its postgres option (one per module, as MCP calls use it).
    const opened = mcp.app.get(PARSE_AGENT_COMPOSITION).opened.find((p) => p.kind === 'postgres');
    const identity = {
      agentId: 'bench',
      permissions: 'readonly',
      authType: 'session_token',
      usingMasterKey: false,
      sessionToken: user.sessionToken,
    };
    const path_ = opened.provider.bind(identity);
    const spec = { field: 'status', operation: 'count', limit: 100 };

    const direct = await timeIt(() => path_.groupBy(CLASS, spec));
    // The hand-written equivalent: the reader's principals, the ACL test, the grouping.
    const principals = ['*', user.objectId];
    const handSql =
      `SELECT "status" AS "key", count(*)::float8 AS "value" FROM "${CLASS}" ` +
      `WHERE ("_rperm" IS NULL OR "_rperm" && $1::text[]) GROUP BY "status" ORDER BY 2 DESC, 1 LIMIT 101`;
    const hand = await timeIt(async () => (await db.query(handSql, [principals])).rows);
    const pagedRepeat = Math.max(1, Math.min(3, REPEAT));
    const pagedTimes = [];
    let paged;
    for (let i = 0; i < pagedRepeat; i++) {
      const t = process.hrtime.bigint();
      paged = await pagedQueryClass(mcp.url, user.sessionToken);
      pagedTimes.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    pagedTimes.sort((a, b) => a - b);
    const pagedMedian = pagedTimes[Math.floor(pagedTimes.length / 2)];

    // Same answer three ways, and the one the seed implies, or the numbers mean nothing.
    const sorted = (o) =>
      JSON.stringify(Object.fromEntries(Object.entries(o).sort(([x], [y]) => x.localeCompare(y))));
    const asObject = (rows) => Object.fromEntries(rows.map((r) => [r.key, Number(r.value)]));
    const a = asObject(direct.last);
    const c = asObject(hand.last);
    const b = Object.fromEntries(paged.groups);
    const expected = expectedCounts();
    check(
      sorted(a) === sorted(expected) &&
        sorted(b) === sorted(expected) &&
        sorted(c) === sorted(expected),
      `answers differ: expected ${sorted(expected)}, direct ${sorted(a)}, paged REST ${sorted(b)}, hand SQL ${sorted(c)}`,
    );
    const visible = Object.values(a).reduce((s, n) => s + n, 0);
    const families = await benchFamilies(path_, db, principals, pagedMedian);
    const out = {
      smoke: SMOKE,
      rows: ROWS,
      visibleToUser: visible,
      directMs: +direct.median.toFixed(2),
      handSqlMs: +hand.median.toFixed(2),
      pagedQueryClassMs: +pagedMedian.toFixed(0),
      directVsPaged: +(pagedMedian / direct.median).toFixed(0),
      directVsHandSql: +(direct.median / hand.median).toFixed(2),
      families,
    };
    process.stdout.write(
      [
        '',
        `group_by status (count) on ${ROWS} rows, session-token user (${visible} rows visible)`,
        `  direct PostgreSQL path      median ${out.directMs} ms (min ${direct.min.toFixed(2)}) over ${REPEAT}`,
        `  hand-written SQL            median ${out.handSqlMs} ms (min ${hand.min.toFixed(2)}) over ${REPEAT}`,
        `  paging query_class over MCP median ${out.pagedQueryClassMs} ms over ${pagedRepeat} (${paged.rows} rows moved in ${paged.calls} calls)`,
        `  direct vs paging: ${out.directVsPaged}x faster (target >= 100x)`,
        `  direct vs hand-written SQL: ${out.directVsHandSql}x the time (target <= 1.3x)`,
        '',
        `aggregate pipelines per stage family (median over ${REPEAT}; paging the same rows: ${out.pagedQueryClassMs} ms)`,
        ...families.map(
          (f) =>
            `  ${f.family.padEnd(40)} direct ${f.directMs} ms, hand SQL ${f.handSqlMs} ms = ${f.vsHandSql}x (target <= 1.3x); ${f.vsPaging}x faster than paging (target >= 50x)\n` +
            `  ${''.padEnd(40)} (the path's SQL sent straight: ${f.sentSqlMs} ms = ${f.sentVsHandSql}x the hand SQL)`,
        ),
        '',
      ].join('\n'),
    );
    process.stdout.write(JSON.stringify(out) + '\n');
  } finally {
    await mcp?.app.close().catch(() => undefined);
    await db.end().catch(() => undefined);
    parse?.child.kill('SIGINT');
    await pg.stop().catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench failed: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
