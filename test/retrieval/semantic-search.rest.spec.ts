import { createSearchReaders, prng, randomSentence, searchAgents } from './retrieval-fixtures';
import {
  AgentSearchable,
  AgentTenantScope,
  AgentVisible,
  LocalLexicalEmbedder,
  ParseClass,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { chunkText } from 'nestjs-parse-agent/retrieval/chunker';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, type Data } from '../harness/envelopes';
import { createObjects, defineClass, type SeededUser } from '../harness/fixtures';
import { findRows, type RestAuth } from '../harness/parse-rest';

/**
 * semantic_search on an app with NO direct database path (Parse REST only) against the real Parse
 * Server of the harness: the newest `semanticSearchCandidateLimit` rows the agent may read are
 * read with its own session (through the policed reader), embedded on the fly and ranked exactly.
 * The oracle: the same rows fetched from Parse REST for the same identity (newest first, the same
 * bound), chunked and embedded here, scored by brute force.
 */
const run = Date.now().toString(36);
const TICKET = `RestSemTicket_${run}`;
const CHUNKING = { size: 160, overlap: 30, maxPerDocument: 4 };
const BOUND = 30;

@ParseClass(TICKET)
@AgentVisible()
@AgentTenantScope('tenant')
@AgentSearchable({ fields: ['body'], filterFields: ['status'], chunk: CHUNKING })
class Ticket {}

const VOCAB = (
  'refund invoice billing charge card payment login password reset account locked email ' +
  'shipping delivery late parcel courier address damaged broken screen battery charger ' +
  'warranty repair replacement order cancel subscription renewal discount coupon price'
).split(' ');
const STATUSES = ['open', 'closed'];
const GLOBEX_WORD = 'globexmarker';
const ADMIN_WORD = 'zebraconfidential';

const sentence = (rand: () => number, words: number, extra: string[] = []) =>
  randomSentence(rand, VOCAB, words, extra, 0.15);

const embedder = new LocalLexicalEmbedder();

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    dot += x * b[i];
    na += x * x;
    nb += b[i] * b[i];
  });
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/** Documents best first with their best chunk score, by brute force over `rows`. */
function oracle(rows: Data[], query: string): Array<{ id: string; best: number }> {
  const q = embedder.vector(query);
  return rows
    .map((row) => {
      const text = typeof row.body === 'string' ? row.body : '';
      const scores = chunkText(text, CHUNKING).chunks.map((c) =>
        cosine(embedder.vector(c.text), q),
      );
      return { id: row.objectId as string, best: Math.max(...scores) };
    })
    .filter((d) => Number.isFinite(d.best))
    .sort((a, b) => b.best - a.best || (a.id < b.id ? -1 : 1));
}

describe('semantic_search on Parse REST only (real Parse Server, bounded exact scan)', () => {
  let bed: AgentTestBed;
  let alice: SeededUser;
  let aliceAdminTier: ParseAgent;
  let aliceAgent: ParseAgent;
  let carolAgent: ParseAgent;
  const globexIds = new Set<string>();
  const adminOnlyIds = new Set<string>();
  const aliceAuth = (): RestAuth => ({ sessionToken: alice.sessionToken });

  beforeAll(async () => {
    const readers = await createSearchReaders('rsem', run);
    alice = readers.alice;
    await defineClass(TICKET, {
      body: { type: 'String' },
      status: { type: 'String' },
      tenant: { type: 'String' },
    });
    const rand = prng(41);
    const rows: Array<Record<string, unknown>> = [];
    const kinds: string[] = [];
    const add = (kind: string, tenant: string, acl: Record<string, unknown>, extra: string[]) => {
      rows.push({
        body: sentence(rand, 5 + Math.floor(rand() * 60), extra),
        status: STATUSES[Math.floor(rand() * STATUSES.length)],
        tenant,
        ACL: acl,
      });
      kinds.push(kind);
    };
    // Interleaved, so the newest BOUND rows alice may read mix with rows she may not.
    for (let i = 0; i < 45; i++) {
      add('acme', 'acme', { '*': { read: true } }, []);
      if (i % 3 === 0) add('globex', 'globex', { '*': { read: true } }, [GLOBEX_WORD]);
      if (i % 4 === 0) {
        add('admin', 'acme', { [`role:${readers.adminRole}`]: { read: true } }, [ADMIN_WORD]);
      }
    }
    // One at a time: createdAt orders them (the bound reads the newest).
    for (let i = 0; i < rows.length; i++) {
      const [id] = await createObjects(TICKET, [rows[i]]);
      if (kinds[i] === 'globex') globexIds.add(id);
      if (kinds[i] === 'admin') adminOnlyIds.add(id);
    }
    bed = await createAgentTestBed([Ticket], {
      embeddings: embedder,
      semanticSearchCandidateLimit: BOUND,
    });
    ({ aliceAgent, aliceAdminTier, carolAgent } = searchAgents(bed, readers));
  }, 120_000);

  afterAll(() => bed?.close());

  const search = (agent: ParseAgent, args: Record<string, unknown>) =>
    agent.execute('semantic_search', { class_name: TICKET, ...args });

  it('is offered with no direct database path', () => {
    expect(aliceAgent.allowedTools()).toContain('semantic_search');
  });

  it('equals a brute-force oracle over the same bounded candidates, and reports the bound', async () => {
    const rand = prng(3);
    for (let i = 0; i < 8; i++) {
      const status = i % 2 === 0 ? STATUSES[i % 4 === 0 ? 0 : 1] : undefined;
      const where = { tenant: 'acme', ...(status ? { status } : {}) };
      const candidates = await findRows(TICKET, where, aliceAuth(), {
        order: '-createdAt',
        limit: String(BOUND),
      });
      const total = (await findRows(TICKET, where, aliceAuth(), { limit: '1000' })).length;
      const query = sentence(rand, 1 + Math.floor(rand() * 4));
      const k = 1 + Math.floor(rand() * 8);
      const data = ok(
        await search(aliceAdminTier, {
          query,
          k,
          max_chunks_per_document: 1,
          max_total_tokens: 0,
          ...(status ? { where: { status } } : {}),
        }),
      );
      expect(data.method).toBe('bounded');
      expect(data.approximate).toBe(false);
      expect(data.candidate_bound).toBe(BOUND);
      expect(data.candidates_considered).toBe(Math.min(BOUND, total));
      expect(data.candidates_complete).toBe(total <= BOUND);
      if (total > BOUND) expect(data.candidates_note).toMatch(/Only the newest 30 matching rows/);
      const expected = oracle(candidates, query).slice(0, k);
      const got = (data.chunks as Data[]).map((c) => ({ id: c.object_id, best: c.score }));
      expect(got.map((g) => g.best)).toEqual(expected.map((e) => expect.closeTo(e.best, 9)));
      const candidateIds = new Set(candidates.map((r) => r.objectId));
      for (const g of got) expect(candidateIds.has(g.id)).toBe(true);
    }
  });

  it("alice never gets a globex or an admin-only ticket; carol's role does see the admin ones", async () => {
    const forbidden = new Set([...globexIds, ...adminOnlyIds]);
    for (const query of [GLOBEX_WORD, ADMIN_WORD, `${GLOBEX_WORD} ${ADMIN_WORD} refund`]) {
      const data = ok(await search(aliceAgent, { query, k: 20, max_total_tokens: 0 }));
      const text = JSON.stringify({ ...data, query: undefined });
      for (const id of forbidden) expect(text).not.toContain(id);
      expect(text).not.toContain(GLOBEX_WORD);
      expect(text).not.toContain(ADMIN_WORD);
      for (const c of data.chunks as Data[]) {
        expect(data.documents[c.object_id].tenant).toBe('acme');
      }
    }
    const carolSees = ok(await search(carolAgent, { query: ADMIN_WORD, k: 20 }));
    const ids = (carolSees.chunks as Data[]).map((c) => c.object_id);
    expect(ids.some((id) => adminOnlyIds.has(id))).toBe(true);
    expect(ids.some((id) => globexIds.has(id))).toBe(false);
  });

  it('refuses hybrid mode on this path, saying what serves it', async () => {
    const failure = await search(aliceAgent, { query: 'refund', mode: 'hybrid' });
    expect(JSON.stringify(failure)).toMatch(/'hybrid' needs the direct PostgreSQL path/);
  });
});
