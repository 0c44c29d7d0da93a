import { Client, Pool } from 'pg';
import {
  EmbeddingModelMismatchError,
  LocalLexicalEmbedder,
  SearchIndexer,
} from 'nestjs-parse-agent';
import { PgEmbeddingTable } from 'nestjs-parse-agent/data/postgres/pg-embedding-table';
import { createAgentTestBed } from '../harness/agent-module';
import { testParseConfig } from '../harness/parse-rest';

/**
 * The stored vectors' model and dimension against the configured embeddings, on a real
 * PostgreSQL (a database of its own, so the shared one's side table is left alone).
 */
const database = `embcheck_${Date.now().toString(36)}`;

describe('embedding model check (real PostgreSQL)', () => {
  let pool: Pool;

  beforeAll(async () => {
    const admin = new Client({ connectionString: testParseConfig().databaseURI });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const url = new URL(testParseConfig().databaseURI);
    url.pathname = `/${database}`;
    pool = new Pool({ connectionString: url.toString(), max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    const admin = new Client({ connectionString: testParseConfig().databaseURI });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  it('records the model once and refuses another model or dimension', async () => {
    const table = new PgEmbeddingTable(pool, { pgvector: 'off' });
    expect(await table.recorded()).toBeUndefined();
    await expect(table.prepare('local-lexical-v1-n2', 64)).resolves.toEqual({
      model: 'local-lexical-v1-n2',
      dimensions: 64,
      storage: 'array',
    });
    await expect(table.prepare('local-lexical-v1-n2', 64)).resolves.toMatchObject({
      dimensions: 64,
    });
    const other = new PgEmbeddingTable(pool);
    await expect(other.prepare('text-embedding-3-small', 64)).rejects.toBeInstanceOf(
      EmbeddingModelMismatchError,
    );
    await expect(other.prepare('local-lexical-v1-n2', 128)).rejects.toThrow(
      /64 dimensions.*128 dimensions/,
    );
  });

  it('fails the boot when the configured embeddings are not the stored ones', async () => {
    const boot = (dimensions: number) =>
      createAgentTestBed([], {
        // The application's pool: a failed boot leaves nothing of the library's open.
        postgres: { pool },
        embeddings: new LocalLexicalEmbedder({ dimensions }),
        startupCheck: 'off',
      });
    const good = await boot(64);
    expect(good.module.get(SearchIndexer)).toBeInstanceOf(SearchIndexer);
    await good.close();
    await expect(boot(32)).rejects.toBeInstanceOf(EmbeddingModelMismatchError);
  });
});
