#!/usr/bin/env node
'use strict';
// `npm run bench:tokens`: what 20 agent tasks on the demo data cost in model tokens, before (main's
// build, BENCH_BEFORE_DIR) and after (this tree), against one Parse Server with one dataset. Each
// task's tool results (the text an MCP client hands the model) are tokenized with gpt-tokenizer
// (o200k_base); a paging task follows next_call until has_more is false. The run fails unless
// every task gives the same information both ways (bench/lib/information.js).
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const { encode } = require('gpt-tokenizer');
const { startProcess, withParseStack } = require('./lib/processes');
const { information } = require('./lib/information');
const { SMOKE, check } = require('./lib/smoke');

// Smoke mode without a checkout to compare with: this tree against itself (the same path end to
// end, and the information check must hold trivially).
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR || (SMOKE ? path.join(__dirname, '..') : undefined);

function unwrap(text) {
  const m = /^[^\n]*\n<(untrusted-data-[0-9a-f]+)>\n([\s\S]*)\n<\/\1>$/.exec(text);
  return m ? m[2] : text;
}

async function callTool(port, name, args) {
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await res.json();
  const result = body.result;
  if (!result || result.isError) throw new Error(`${name} failed: ${JSON.stringify(body).slice(0, 400)}`);
  const text = result.content.map((c) => c.text).join('\n');
  return { text, data: JSON.parse(unwrap(text)) };
}

/** Runs one task: a call, or (page: true) the call and every next_call after it. */
async function runTask(port, task) {
  const pages = [];
  let tokens = 0;
  let chars = 0;
  let call = { tool: task.tool, arguments: task.args };
  for (let i = 0; i < 100; i++) {
    const { text, data } = await callTool(port, call.tool, call.arguments);
    tokens += encode(text).length;
    chars += text.length;
    pages.push(data);
    const more = data.pagination && data.pagination.has_more && data.next_call;
    if (!task.page || !more) break;
    call = data.next_call;
  }
  return { pages, tokens, chars, calls: pages.length };
}

/** The tools/list result the model is handed, in tokens, for an agent with `profile`. */
async function toolsListTokens(port, profile) {
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  if (profile) headers['x-bench-tools-profile'] = profile;
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  const body = await res.json();
  if (!body.result) throw new Error(`tools/list (${profile}) failed: ${JSON.stringify(body).slice(0, 400)}`);
  const text = JSON.stringify(body.result.tools);
  return { tools: body.result.tools.length, tokens: encode(text).length };
}

/** tools/list tokens per named profile (TOOL_PROFILES) of a readonly agent, against no profile. */
async function reportProfiles(port) {
  const { TOOL_PROFILES } = require('nestjs-parse-agent');
  const base = await toolsListTokens(port);
  console.log('\n| tools profile (readonly agent) | tools | tools/list tokens | fewer than none |');
  console.log('|---|---|---|---|');
  console.log(`| (none) | ${base.tools} | ${base.tokens} | - |`);
  for (const profile of Object.keys(TOOL_PROFILES)) {
    const r = await toolsListTokens(port, profile);
    const fewer = (((base.tokens - r.tokens) / base.tokens) * 100).toFixed(1);
    console.log(`| ${profile} | ${r.tools} | ${r.tokens} | ${fewer}% |`);
    check(r.tokens > 0 && r.tokens <= base.tokens, `profile ${profile} listed more than no profile`);
  }
}

async function parseIds(info, className, count, where = {}) {
  const url = `${info.serverURL}/classes/${className}?order=objectId&limit=${count}&keys=objectId&where=${encodeURIComponent(JSON.stringify(where))}`;
  const res = await fetch(url, { headers: { 'x-parse-application-id': info.appId, 'x-parse-master-key': info.masterKey } });
  return (await res.json()).results.map((r) => r.objectId);
}

function tasks(ids) {
  return [
    { name: 'schema overview', tool: 'get_all_schemas', args: {} },
    { name: 'Order schema', tool: 'get_schema', args: { class_name: 'Order' } },
    { name: 'Customer schema', tool: 'get_schema', args: { class_name: 'Customer' } },
    { name: 'count orders', tool: 'count_objects', args: { class_name: 'Order' } },
    { name: 'count shipped orders', tool: 'count_objects', args: { class_name: 'Order', where: { status: 'shipped' } } },
    { name: 'count gold customers', tool: 'count_objects', args: { class_name: 'Customer', where: { tier: 'gold' } } },
    { name: '20 customers', tool: 'query_class', args: { class_name: 'Customer', limit: 20, order: 'objectId' } },
    { name: '10 largest orders', tool: 'query_class', args: { class_name: 'Order', limit: 10, order: '-total,objectId' } },
    { name: 'shipped orders, 3 fields', tool: 'query_class', args: { class_name: 'Order', where: { status: 'shipped' }, keys: ['orderNumber', 'total', 'status'], limit: 25, order: 'objectId' } },
    { name: '20 products', tool: 'query_class', args: { class_name: 'Product', limit: 20, order: 'objectId' } },
    { name: '10 support tickets', tool: 'query_class', args: { class_name: 'SupportTicket', limit: 10, order: 'objectId' } },
    { name: 'recent orders sample', tool: 'get_sample_objects', args: { class_name: 'Order', limit: 5 } },
    { name: 'one customer', tool: 'get_object', args: { class_name: 'Customer', object_id: ids.customer } },
    { name: 'five orders by id', tool: 'get_objects', args: { class_name: 'Order', ids: ids.orders } },
    { name: 'orders of one customer', tool: 'query_class', args: { class_name: 'Order', where: { customer: ids.customer }, order: 'objectId' } },
    { name: '40 orders as csv', tool: 'query_class', args: { class_name: 'Order', limit: 40, format: 'csv', order: 'objectId' } },
    { name: '20 customers as markdown', tool: 'query_class', args: { class_name: 'Customer', limit: 20, format: 'markdown', order: 'objectId' } },
    { name: 'one order with its customer', tool: 'get_object', args: { class_name: 'Order', object_id: ids.orders[0], include: ['customer'] } },
    { name: 'all tenants', tool: 'query_class', args: { class_name: 'Tenant', order: 'slug' } },
    { name: 'page through all customers', tool: 'query_class', args: { class_name: 'Customer', limit: 100, order: 'objectId' }, page: true },
  ];
}

async function main() {
  // BENCH_TOKENS=profiles: only the tools/list tokens per profile (needs no checkout to compare).
  if (process.env.BENCH_TOKENS === 'profiles') {
    await withParseStack('tokens', async ({ env, start }) => {
      const after = await start('server.js', env);
      await reportProfiles(after.info.port);
    });
    return;
  }
  if (!BEFORE_DIR || !fs.existsSync(path.join(BEFORE_DIR, 'bench', 'server.js'))) {
    throw new Error('Set BENCH_BEFORE_DIR to a built checkout of the commit to compare with (npm run build there).');
  }
  await withParseStack('tokens', async ({ parse, env, start }) => {
    // Seed once with a throwaway server, then start both on the finished dataset so neither
    // caches schemas from before the seed.
    const seeder = await startProcess('server.js', env);
    seeder.child.kill('SIGINT');
    const skip = { ...env, BENCH_SKIP_SEED: '1' };
    const before = await start(path.relative(__dirname, path.join(BEFORE_DIR, 'bench', 'server.js')), skip);
    const after = await start('server.js', skip);

    const ids = {
      customer: (await parseIds(parse.info, 'Customer', 1, { isDeleted: { $ne: true } }))[0],
      orders: await parseIds(parse.info, 'Order', 5, { isDeleted: { $ne: true } }),
    };
    const rows = [];
    for (const task of tasks(ids)) {
      const b = await runTask(before.info.port, task);
      const a = await runTask(after.info.port, task);
      const elided = a.pages[0].elided_fields || [];
      assert.deepEqual(information(a.pages, elided), information(b.pages, elided), `"${task.name}": not the same information`);
      rows.push({ task: task.name, before: b, after: a, elided });
    }
    const total = (side, filter = () => true) => rows.filter(filter).reduce((s, r) => s + r[side].tokens, 0);
    const line = (r) =>
      `| ${r.task} | ${r.before.tokens} (${r.before.calls}) | ${r.after.tokens} (${r.after.calls}) | ${pct(r.after.tokens, r.before.tokens)} |${r.elided.length ? ` elided: ${r.elided.join(', ')}` : ''}`;
    const pct = (a, b) => `${(((b - a) / b) * 100).toFixed(1)}%`;
    console.log('| task | tokens before (calls) | after (calls) | fewer | note');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(line(r));
    const tb = total('before');
    const ta = total('after');
    console.log(`\nAll 20 tasks: ${tb} -> ${ta} tokens, ${pct(ta, tb)} fewer (same information, checked).`);
    const noElision = (r) => r.elided.length === 0;
    const tb2 = total('before', noElision);
    const ta2 = total('after', noElision);
    console.log(`Without the tasks where large fields were elided: ${tb2} -> ${ta2}, ${pct(ta2, tb2)} fewer.`);
    await reportProfiles(after.info.port);
    check(rows.length === 20 && rows.every((r) => r.after.tokens > 0 && r.before.tokens > 0), 'a task gave no tokens');
    if (SMOKE && !process.env.BENCH_BEFORE_DIR) {
      // The same build on both sides: token counts may differ only by the wrapper's random tag.
      check(Math.abs(ta - tb) <= rows.length * 4, `the same build gave ${tb} and ${ta} tokens`);
    }
  });
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  },
);
