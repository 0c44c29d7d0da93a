import { createSearchReaders, prng, randomSentence, searchAgents } from './retrieval-fixtures';
import {
  type EmbeddingProvider,
  type ToolCallEvent,
  AgentSearchable,
  AgentTenantScope,
  AgentVisible,
  LocalLexicalEmbedder,
  ParseClass,
  SearchIndexer,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { chunkText } from 'nestjs-parse-agent/retrieval/chunker';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { createObjects, defineClass, type SeededUser } from '../harness/fixtures';
import { findRows, parseRest, testParseConfig, type RestAuth } from '../harness/parse-rest';

/**
 * semantic_search on the direct PostgreSQL path of a real Parse Server (real PostgreSQL, exact
 * cosine scan in SQL), against an oracle computed here: the rows Parse REST returns to the same
 * identity, chunked and embedded in JavaScript, scored by brute force.
 */
const run = Date.now().toString(36);
const TICKET = `SemTicket_${run}`;
const CHUNKING = { size: 200, overlap: 40, maxPerDocument: 6 };

@ParseClass(TICKET)
@AgentVisible()
@AgentTenantScope('tenant')
@AgentSearchable({ fields: ['body', 'title'], filterFields: ['status'], chunk: CHUNKING })
class Ticket {}

const VOCAB = (
  'refund invoice billing charge card payment login password reset account locked email ' +
  'shipping delivery late parcel courier address damaged broken screen battery charger ' +
  'warranty repair replacement order cancel subscription renewal discount coupon price ' +
  'slow crash error update install app sync calendar export report dashboard'
).split(' ');
const STATUSES = ['open', 'closed', 'pending'];
/** Words only the rows alice may never see carry. */
const GLOBEX_WORD = 'globexmarker';
const ADMIN_WORD = 'zebraconfidential';

const sentence = (rand: () => number, words: number, extra: string[] = []) =>
  randomSentence(rand, VOCAB, words, extra, 0.1);

const embedder = new LocalLexicalEmbedder();
const f32 = (v: number[]) => v.map((x) => Math.fround(x));

/** Documents best first with their chunk scores, computed in JavaScript over `rows`. */
function oracle(rows: Data[], field: string, query: string) {
  const q = f32(embedder.vector(query));
  const docs = rows
    .map((row) => {
      const text = typeof row[field] === 'string' ? (row[field] as string) : '';
      const scores = chunkText(text, CHUNKING)
        .chunks.map((c) => {
          const v = f32(embedder.vector(c.text));
          return v.reduce((sum, x, i) => sum + x * q[i], 0);
        })
        .sort((a, b) => b - a);
      return { id: row.objectId as string, scores };
    })
    .filter((d) => d.scores.length > 0)
    .sort((a, b) => b.scores[0] - a.scores[0] || (a.id < b.id ? -1 : 1));
  return docs;
}

/** Documents of a result in rank order (by their best chunk), with their chunk scores. */
function resultDocs(data: Data): Array<{ id: string; scores: number[] }> {
  const byId = new Map<string, number[]>();
  for (const c of data.chunks as Data[]) {
    const list = byId.get(c.object_id) ?? [];
    list.push(c.score);
    byId.set(c.object_id, list);
  }
  return [...byId].map(([id, scores]) => ({ id, scores }));
}

describe('semantic_search on PostgreSQL (real Parse Server, real PostgreSQL, exact scan)', () => {
  let bed: AgentTestBed;
  let alice: SeededUser;
  let aliceAgent: ParseAgent;
  let aliceAdminTier: ParseAgent;
  let carolAgent: ParseAgent;
  let indexer: SearchIndexer;
  const globexIds = new Set<string>();
  const adminOnlyIds = new Set<string>();
  const aliceAuth = (): RestAuth => ({ sessionToken: alice.sessionToken });

  beforeAll(async () => {
    const readers = await createSearchReaders('sem', run);
    alice = readers.alice;
    await defineClass(TICKET, {
      title: { type: 'String' },
      body: { type: 'String' },
      status: { type: 'String' },
      tenant: { type: 'String' },
      priority: { type: 'Number' },
    });
    const rand = prng(35);
    const rows: Array<Record<string, unknown>> = [];
    const kinds: string[] = [];
    const add = (kind: string, tenant: string, acl: Record<string, unknown>, extra: string[]) => {
      const words = 5 + Math.floor(rand() * 90);
      rows.push({
        title: sentence(rand, 4, extra),
        body: sentence(rand, words, extra) + ' ' + sentence(rand, Math.floor(rand() * 40), extra),
        status: STATUSES[Math.floor(rand() * STATUSES.length)],
        tenant,
        priority: Math.floor(rand() * 5),
        ACL: acl,
      });
      kinds.push(kind);
    };
    for (let i = 0; i < 40; i++) add('acme', 'acme', { '*': { read: true } }, []);
    for (let i = 0; i < 10; i++) add('alice', 'acme', { [alice.objectId]: { read: true } }, []);
    for (let i = 0; i < 12; i++) {
      add('admin', 'acme', { [`role:${readers.adminRole}`]: { read: true } }, [ADMIN_WORD]);
    }
    for (let i = 0; i < 20; i++) add('globex', 'globex', { '*': { read: true } }, [GLOBEX_WORD]);
    // One acme row with no body: it has no chunks of that field.
    rows.push({
      title: 'empty body',
      status: 'open',
      tenant: 'acme',
      ACL: { '*': { read: true } },
    });
    kinds.push('acme');
    const ids = await createObjects(TICKET, rows);
    ids.forEach((id, i) => {
      if (kinds[i] === 'globex') globexIds.add(id);
      if (kinds[i] === 'admin') adminOnlyIds.add(id);
    });

    bed = await createAgentTestBed([Ticket], {
      postgres: { uri: testParseConfig().databaseURI },
      embeddings: embedder,
    });
    indexer = bed.module.get(SearchIndexer);
    const stored = await findRows(TICKET, {}, { masterKey: true }, { limit: '1000' });
    const outcome = await indexer.indexRows(TICKET, stored as Array<{ objectId: string }>);
    expect(outcome.rows).toBe(rows.length);
    expect(outcome.embedded).toBeGreaterThan(rows.length); // two fields per row
    ({ aliceAgent, aliceAdminTier, carolAgent } = searchAgents(bed, readers));
  }, 120_000);

  afterAll(() => bed?.close());

  const search = (agent: ParseAgent, args: Record<string, unknown>) =>
    agent.execute('semantic_search', { class_name: TICKET, ...args });

  it('is offered because a class is @AgentSearchable', () => {
    expect(aliceAgent.allowedTools()).toContain('semantic_search');
  });

  it('equals a brute-force oracle over the rows Parse REST returns to the same identity', async () => {
    const rand = prng(7);
    const aliceRows = await findRows(TICKET, { tenant: 'acme' }, aliceAuth(), { limit: '1000' });
    for (let i = 0; i < 12; i++) {
      const query = sentence(rand, 1 + Math.floor(rand() * 5));
      const field = i % 3 === 0 ? 'title' : 'body';
      const status = i % 4 === 0 ? STATUSES[i % 3] : undefined;
      const k = 1 + Math.floor(rand() * 10);
      const data = ok(
        await search(aliceAdminTier, {
          query,
          k,
          text_field: field,
          max_chunks_per_document: 6,
          max_total_tokens: 0,
          ...(status ? { where: { status } } : {}),
        }),
      );
      expect(data.scores).toBe('exact');
      expect(data.method).toBe('exact');
      expect(data.approximate).toBe(false);
      expect(data.ef_search).toBeUndefined();
      const allowed = status ? aliceRows.filter((r) => r.status === status) : aliceRows;
      const expected = oracle(allowed, field, query).slice(0, k);
      const got = resultDocs(data);
      expect(got.map((d) => d.scores[0])).toEqual(
        expected.map((d) => expect.closeTo(d.scores[0], 5)),
      );
      const oracleById = new Map(oracle(allowed, field, query).map((d) => [d.id, d.scores]));
      for (const doc of got) {
        // Each returned document is one the identity may read, with exactly its chunk scores.
        expect(oracleById.has(doc.id)).toBe(true);
        expect(doc.scores).toEqual(oracleById.get(doc.id)!.map((s) => expect.closeTo(s, 5)));
        expect(Object.keys(data.documents)).toContain(doc.id);
        expect(data.documents[doc.id][field]).toBeUndefined();
      }
    }
  });

  it("alice's search never returns, counts or scores a globex or an admin-only ticket", async () => {
    const rand = prng(99);
    const forbidden = new Set([...globexIds, ...adminOnlyIds]);
    for (let i = 0; i < 40; i++) {
      const words = [sentence(rand, 1 + Math.floor(rand() * 4))];
      if (i % 2 === 0) words.push(GLOBEX_WORD);
      if (i % 3 === 0) words.push(ADMIN_WORD);
      const data = ok(
        await search(aliceAgent, {
          query: words.join(' '),
          k: 20,
          text_field: i % 2 ? 'title' : 'body',
          max_chunks_per_document: 6,
          ...(i % 5 === 0 ? { where: { status: { $in: ['open', 'pending'] } } } : {}),
        }),
      );
      // Everything but the echoed query.
      const text = JSON.stringify({ ...data, query: undefined });
      for (const id of forbidden) expect(text).not.toContain(id);
      expect(text).not.toContain(GLOBEX_WORD);
      expect(text).not.toContain(ADMIN_WORD);
      expect(data.scores).toBe('quantized');
      for (const c of data.chunks as Data[]) {
        expect(Math.round(c.score * 100) / 100).toBe(c.score);
        expect(data.documents[c.object_id].tenant).toBe('acme');
      }
    }
  });

  it('shows the admin-only tickets to a member of the role (the leak check can fail)', async () => {
    const data = ok(await search(carolAgent, { query: ADMIN_WORD, k: 20 }));
    const ids = (data.chunks as Data[]).map((c) => c.object_id);
    expect(ids.some((id) => adminOnlyIds.has(id))).toBe(true);
    expect(ids.some((id) => globexIds.has(id))).toBe(false);
  });

  it('refuses where keys other than the filter fields, naming the accepted ones', async () => {
    for (const where of [
      { _rperm: { $in: ['*'] } },
      { tenant: 'globex' },
      { priority: 1 },
      { $or: [{ status: 'open' }, { _wperm: 'x' }] },
      { $or: [{ status: 'open' }, { tenant: 'globex' }] },
      { status: { $inQuery: { className: TICKET, where: {} } } },
      { status: { $in: [{ _p_owner: 'x' }] } },
    ]) {
      const failure = refused(await search(aliceAgent, { query: 'refund', where }));
      expect(failure.error_code).toBe('invalid_argument');
      expect(failure.error).toContain("'status'");
    }
    const unknownArg = refused(await search(aliceAgent, { query: 'refund', limit: 3 }));
    expect(unknownArg.error).toMatch(/limit/);
    const wrongField = refused(await search(aliceAgent, { query: 'refund', text_field: 'tenant' }));
    expect(wrongField.error).toContain("'body', 'title'");
  });

  it('trims the lowest-ranked chunks to max_total_tokens and says so', async () => {
    const all = ok(
      await search(aliceAgent, { query: 'refund payment card', k: 10, max_total_tokens: 0 }),
    );
    const trimmed = ok(
      await search(aliceAgent, { query: 'refund payment card', k: 10, max_total_tokens: 120 }),
    );
    expect(trimmed.budget_truncated).toBe(true);
    expect(trimmed.budget_dropped).toBe(all.chunks.length - trimmed.chunks.length);
    expect(trimmed.chunks).toEqual(all.chunks.slice(0, trimmed.chunks.length));
    for (const id of Object.keys(trimmed.documents)) {
      expect((trimmed.chunks as Data[]).some((c) => c.object_id === id)).toBe(true);
    }
    expect(all.budget_truncated).toBeUndefined();
  });

  it('follows the save path: indexRow after an update, removeRow after a delete', async () => {
    const [row] = await findRows(
      TICKET,
      { tenant: 'acme', title: { $ne: 'empty body' } },
      aliceAuth(),
      {
        limit: '1',
      },
    );
    const word = `quokka${run}`;
    await parseRest(
      'PUT',
      `/classes/${TICKET}/${row.objectId as string}`,
      { body: `A ${word} ate the router.` },
      { masterKey: true },
    );
    const before = ok(await search(aliceAgent, { query: word, k: 1 }));
    expect(before.chunks[0]?.stale ?? false).toBe(before.chunks[0]?.object_id === row.objectId);
    const [updated] = await findRows(TICKET, { objectId: row.objectId }, { masterKey: true });
    await indexer.indexRow(TICKET, updated as { objectId: string });
    const after = ok(await search(aliceAgent, { query: word, k: 1 }));
    expect(after.chunks[0].object_id).toBe(row.objectId);
    expect(after.chunks[0].content).toContain(word);
    expect(after.chunks[0].stale).toBeUndefined();
    await indexer.removeRow(TICKET, row.objectId as string);
    const gone = ok(await search(aliceAgent, { query: word, k: 50, max_total_tokens: 0 }));
    expect((gone.chunks as Data[]).some((c) => c.object_id === row.objectId)).toBe(false);
  });

  it("puts embedding calls, tokens and cost on the tool-call event, and caps a tenant's spend", async () => {
    // The local embedder with a token count and a price, as a paid model would report them (its
    // vectors stay the stored model's, so the search itself is the real one).
    const priced: EmbeddingProvider = {
      name: 'priced-local',
      model: embedder.model,
      dimensions: embedder.dimensions,
      costPerMillionTokens: 20,
      embed: async (texts, options) => ({
        ...(await embedder.embed(texts, options)),
        usage: { tokens: 7 * texts.length },
      }),
    };
    const capped = await createAgentTestBed([Ticket], {
      postgres: { uri: testParseConfig().databaseURI },
      embeddings: priced,
      embeddingSpendCap: { maxTokens: 12, windowSeconds: 60 },
    });
    try {
      const events: ToolCallEvent[] = [];
      const sub = capped.events.toolCalls$.subscribe((e) => events.push(e));
      const agent = capped.factory.create({ sessionToken: alice.sessionToken, tenantId: 'acme' });
      // 'refund card' is estimated at 3 tokens: four fit in 12, the fifth does not.
      for (let i = 0; i < 4; i++) ok(await search(agent, { query: 'refund card' }));
      const refusal = refused(await search(agent, { query: 'refund card' }));
      expect(refusal.error_code).toBe('rate_limited');
      expect(refusal.retry_after).toBeGreaterThan(0);
      expect(refusal.error).toMatch(/spend cap/);
      // Another tenant has its own budget; an admin agent is not charged.
      const other = capped.factory.create({ sessionToken: alice.sessionToken, tenantId: 'other' });
      expect(ok(await search(other, { query: 'refund card' })).count).toBe(0);
      const admin = capped.factory.create({
        sessionToken: alice.sessionToken,
        tenantId: 'acme',
        permissions: 'admin',
      });
      ok(await search(admin, { query: 'refund card' }));
      sub.unsubscribe();
      const first = events.find((e) => e.tool === 'semantic_search' && e.success);
      expect(first).toMatchObject({ embedding_calls: 1, embedding_tokens: 7 });
      expect(first?.embedding_cost_usd).toBeCloseTo((7 * 20) / 1e6, 12);
      const denied = events.find((e) => e.tool === 'semantic_search' && !e.success);
      expect(denied?.error_code).toBe('rate_limited');
      expect(denied?.embedding_calls).toBeUndefined();
    } finally {
      await capped.close();
    }
  });

  it('hybrid mode fuses keyword and vector ranks, over the same allowed rows only', async () => {
    const forbidden = new Set([...globexIds, ...adminOnlyIds]);
    for (const query of [`${ADMIN_WORD} refund`, `${GLOBEX_WORD} parcel`, 'damaged screen']) {
      const data = ok(await search(aliceAgent, { query, k: 10, mode: 'hybrid' }));
      expect(data.scores).toBe('rrf');
      expect(data.method).toBe('exact+fulltext');
      const text = JSON.stringify({ ...data, query: undefined });
      for (const id of forbidden) expect(text).not.toContain(id);
      expect(new Set((data.chunks as Data[]).map((c) => c.object_id)).size).toBeLessThanOrEqual(10);
    }
    // A member of the role finds the admin-only tickets by their keyword.
    const carol = ok(await search(carolAgent, { query: ADMIN_WORD, k: 5, mode: 'hybrid' }));
    expect(adminOnlyIds.has(carol.chunks[0].object_id)).toBe(true);
    expect(carol.chunks[0].content).toContain(ADMIN_WORD);
  });

  it('says what to do for a class that is not searchable', async () => {
    const failure = refused(
      await aliceAgent.execute('semantic_search', { class_name: '_User', query: 'x' }),
    );
    expect(failure.error).not.toContain('undefined');
  });
});
