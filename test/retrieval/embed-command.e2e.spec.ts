import { join } from 'node:path';
import { existsSync, writeFileSync } from 'node:fs';
import { Pool } from 'pg';
import {
  AgentSearchable,
  AgentVisible,
  LocalLexicalEmbedder,
  ParseClass,
  SearchIndexer,
} from 'nestjs-parse-agent';
import { backfill } from 'nestjs-parse-agent/cli/embed-backfill';
import type { DataPath } from 'nestjs-parse-agent/ports/data-path';
import { CLI_CWD, cliEnv, runCliProcess } from '../cli/cli-process';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { createObjects, defineClass } from '../harness/fixtures';
import { testParseConfig } from '../harness/parse-rest';

/**
 * `parse-agent embed <Class>` as a child process, and the backfill it runs, on the real Parse
 * Server and its real PostgreSQL: every row embedded once, a rerun embeds nothing, an interrupted
 * run resumes after its checkpoint.
 */
const CLASS = `EmbedNote_${Date.now().toString(36)}`;
const MODELS = join(__dirname, 'embed.models.ts');
const ROWS = 37;

/** The same declaration as embed.models.ts, for the in-process part. */
@ParseClass(CLASS)
@AgentVisible()
@AgentSearchable({ fields: ['text'], chunk: { size: 120, overlap: 20, maxPerDocument: 4 } })
class EmbedNote {}

describe('parse-agent embed (child process, real Parse Server, real PostgreSQL)', () => {
  let pool: Pool;
  const env = () =>
    cliEnv({ POSTGRES_URI: testParseConfig().databaseURI, EMBED_TEST_CLASS: CLASS });
  const chunkRows = async () =>
    (
      await pool.query(
        'SELECT count(DISTINCT object_id)::int AS n FROM parse_agent_embeddings WHERE class_name = $1',
        [CLASS],
      )
    ).rows[0].n as number;

  beforeAll(async () => {
    pool = new Pool({ connectionString: testParseConfig().databaseURI, max: 2 });
    await defineClass(CLASS, { text: { type: 'String' } });
    await createObjects(
      CLASS,
      Array.from({ length: ROWS }, (_, i) => ({
        text: `note ${i} about ${i % 2 ? 'refunds and invoices' : 'shipping and parcels'} `.repeat(
          1 + (i % 7),
        ),
      })),
    );
  }, 60_000);

  afterAll(() => pool?.end());

  it('embeds every row, reports progress on stderr and the cost on stdout', async () => {
    const run = await runCliProcess(
      ['--models', MODELS, 'embed', CLASS, '--batch-size', '10', '--rate', '50'],
      env(),
    );
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({
      class_name: CLASS,
      model: 'local-lexical-v1-n2',
      rows: ROWS,
      total: ROWS,
      embedded: ROWS,
      unchanged: 0,
      embedding_tokens: 0,
    });
    expect(summary.embedding_calls).toBeGreaterThanOrEqual(4);
    expect(summary.chunks).toBeGreaterThan(ROWS);
    expect(run.stderr).toMatch(/\[#+\] 37\/37 rows/);
    expect(run.stderr.match(/rows, /g)?.length).toBe(4);
    expect(await chunkRows()).toBe(ROWS);
    expect(existsSync(join(CLI_CWD, `.parse-agent-embed-${CLASS}.json`))).toBe(false);

    const again = await runCliProcess(['--models', MODELS, 'embed', CLASS], env());
    expect(JSON.parse(again.stdout)).toMatchObject({
      rows: ROWS,
      embedded: 0,
      unchanged: ROWS,
      embedding_calls: 0,
    });
  }, 120_000);

  it('refuses without POSTGRES_URI and for a class that is not searchable, saying what to set', async () => {
    const { POSTGRES_URI: _uri, ...noDb } = env();
    const run = await runCliProcess(['--models', MODELS, 'embed', CLASS], noDb);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/POSTGRES_URI/);
    const notSearchable = await runCliProcess(['--models', MODELS, 'embed', '_User'], env());
    expect(notSearchable.code).toBe(2);
    expect(notSearchable.stderr).toMatch(/not @AgentSearchable/);
  }, 60_000);

  describe('resuming', () => {
    let bed: AgentTestBed;
    beforeAll(async () => {
      bed = await createAgentTestBed([EmbedNote], {
        postgres: { uri: testParseConfig().databaseURI },
        embeddings: new LocalLexicalEmbedder(),
      });
    });
    afterAll(() => bed?.close());

    it('stops after a batch, then resumes after the checkpoint', async () => {
      const indexer = bed.module.get(SearchIndexer);
      const factory = bed.factory;
      const services = (
        factory as unknown as {
          services: { data: { pathFor(operation: 'find', agent: unknown): DataPath } };
        }
      ).services;
      const rows = services.data.pathFor('find', factory.create());
      const file = join(CLI_CWD, `resume-${CLASS}.json`);
      const stop = new AbortController();
      await expect(
        backfill(indexer, rows, {
          className: CLASS,
          batchSize: 10,
          rate: 0,
          restart: true,
          checkpointFile: file,
          signal: stop.signal,
          onProgress: (p) => {
            if (p.rows >= 20) stop.abort();
          },
        }),
      ).rejects.toThrow(/abort/i);
      expect(existsSync(file)).toBe(true);
      const resumed = await backfill(indexer, rows, {
        className: CLASS,
        batchSize: 10,
        rate: 0,
        checkpointFile: file,
      });
      expect(resumed.resumedFrom).toEqual(expect.any(String));
      // 20 rows were done before the stop; the resumed run reads only the other 17.
      expect(resumed.rows).toBe(ROWS);
      expect(existsSync(file)).toBe(false);
      writeFileSync(
        file,
        JSON.stringify({ className: CLASS, model: 'another-model', cursor: 'zzz' }),
      );
      const fresh = await backfill(indexer, rows, {
        className: CLASS,
        batchSize: 50,
        rate: 0,
        checkpointFile: file,
      });
      expect(fresh.resumedFrom).toBeUndefined();
      expect(fresh.rows).toBe(ROWS);
    });
  });
});
