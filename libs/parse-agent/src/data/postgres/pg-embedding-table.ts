import { ParseAgentConfigError } from '../../core/errors';
import {
  EmbeddingModelMismatchError,
  type EmbeddingModelRecord,
  type EmbeddingStore,
  type StoredChunk,
} from '../../ports/embedding-store';
import type { PgPoolLike } from './pg-driver';

/** The side table of chunk vectors, in Parse's database (not a Parse class: no _SCHEMA entry). */
export const EMBEDDING_TABLE = 'parse_agent_embeddings';
/** One row: the model and dimension every stored vector has. */
export const EMBEDDING_MODEL_TABLE = 'parse_agent_embedding_model';

export interface PgEmbeddingTableOptions {
  /**
   * `auto` (default): pgvector when the extension is installed or can be created, plain arrays
   * scanned exactly otherwise. `off`: always arrays. `on`: pgvector or fail.
   */
  pgvector?: 'auto' | 'on' | 'off';
  /**
   * pgvector only: the HNSW search width of each query (`hnsw.ef_search`, 1 to 1000, default
   * 1000, pgvector's ceiling). The search is approximate: a wider one finds more of the true
   * nearest chunks and takes longer (see docs/retrieval.md for measured recall).
   */
  efSearch?: number;
  /**
   * pgvector only: how many of the nearest chunks the index walk yields before they are ranked
   * exactly and grouped into documents (1 to 100,000; default: the search width, `efSearch`, or
   * ten per document asked for if that is more; never fewer than the chunks asked for). Chunks of
   * rows the identity may not read or the `where` drops do not count: the walk goes on past its
   * first `ef_search` candidates (pgvector's iterative scan) until it has this many, which finds
   * more of the true nearest. Lower it to trade recall for latency.
   */
  candidates?: number;
  /**
   * pgvector only: the HNSW index's build parameters when `prepare()` creates it (an existing index
   * is kept: drop `parse_agent_embeddings_hnsw` and the next start builds it again with these). Unset: pgvector's defaults, m 16 and
   * ef_construction 64. Larger values build a better-connected graph (higher recall at a given
   * `efSearch`) and take longer to build and more memory.
   */
  hnsw?: { m?: number; efConstruction?: number };
}

/** The HNSW search width when `vectors.efSearch` is not set: pgvector's ceiling. */
export const DEFAULT_EF_SEARCH = 1000;

/** `vectors.hnsw` as the index's WITH clause ('' for pgvector's defaults), checked. */
export function hnswWithOf(options: PgEmbeddingTableOptions = {}): string {
  const { m, efConstruction } = options.hnsw ?? {};
  const parts: string[] = [];
  if (m !== undefined) {
    if (!Number.isInteger(m) || m < 2 || m > 100) {
      throw new ParseAgentConfigError(
        `postgres.vectors.hnsw.m must be an integer from 2 to 100 (pgvector's bounds), got ${String(m)}.`,
      );
    }
    parts.push(`m = ${m}`);
  }
  if (efConstruction !== undefined) {
    if (
      !Number.isInteger(efConstruction) ||
      efConstruction < 4 ||
      efConstruction > 1000 ||
      efConstruction < 2 * (m ?? 16)
    ) {
      throw new ParseAgentConfigError(
        `postgres.vectors.hnsw.efConstruction must be an integer from 4 to 1000 and at least twice m (pgvector's bounds), got ${String(efConstruction)}.`,
      );
    }
    parts.push(`ef_construction = ${efConstruction}`);
  }
  return parts.length ? ` WITH (${parts.join(', ')})` : '';
}

/** `vectors.efSearch`, checked: an integer from 1 to 1000 (pgvector's bounds), else a config error. */
export function efSearchOf(options: PgEmbeddingTableOptions = {}): number {
  const value = options.efSearch ?? DEFAULT_EF_SEARCH;
  if (!Number.isInteger(value) || value < 1 || value > 1000) {
    throw new ParseAgentConfigError(
      `postgres.vectors.efSearch must be an integer from 1 to 1000 (pgvector's hnsw.ef_search), got ${String(value)}.`,
    );
  }
  return value;
}

/** `vectors.candidates`, checked (undefined when unset: the search derives it). */
export function candidatesOf(options: PgEmbeddingTableOptions = {}): number | undefined {
  const value = options.candidates;
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1 || value > 100_000) {
    throw new ParseAgentConfigError(
      `postgres.vectors.candidates must be an integer from 1 to 100000, got ${String(value)}.`,
    );
  }
  return value;
}

/** A vector as pgvector's text form: `[0.1,0.2]`. */
export function vectorLiteral(vector: readonly number[]): string {
  return `[${vector.map((v) => (Number.isFinite(v) ? v : 0)).join(',')}]`;
}

/**
 * The side table on PostgreSQL: one row per chunk (class, field, object, chunk index, offsets,
 * hash of the source text, vector), and a one-row table recording the model. Written with the
 * pool's own authority; reads by agents go through PostgresDataPath.vectorSearch.
 */
export class PgEmbeddingTable implements EmbeddingStore {
  protected record?: EmbeddingModelRecord;

  /** pgvector only: the HNSW search width of each query (`efSearch`, checked at construction). */
  readonly efSearch: number;
  /** pgvector only: chunks the index walk yields (`candidates`, checked; unset: derived). */
  readonly candidates: number | undefined;
  /** pgvector only: the HNSW index's WITH clause (`hnsw`, checked at construction). */
  protected readonly hnswWith: string;

  constructor(
    protected readonly pool: PgPoolLike,
    protected readonly options: PgEmbeddingTableOptions = {},
  ) {
    this.efSearch = efSearchOf(options);
    this.candidates = candidatesOf(options);
    this.hnswWith = hnswWithOf(options);
  }

  /** How vectors are stored, once known (after `recorded()` or `prepare()` found the table). */
  get storage(): EmbeddingModelRecord['storage'] | undefined {
    return this.record?.storage;
  }

  async recorded(): Promise<EmbeddingModelRecord | undefined> {
    if (this.record) return this.record;
    const exists = await this.pool.query(`SELECT to_regclass($1) IS NOT NULL AS "exists"`, [
      EMBEDDING_MODEL_TABLE,
    ]);
    if (!exists.rows[0]?.exists) return undefined;
    const { rows } = await this.pool.query(
      `SELECT model, dimensions, storage FROM ${EMBEDDING_MODEL_TABLE} WHERE id = 1`,
    );
    if (!rows.length) return undefined;
    this.record = {
      model: String(rows[0].model),
      dimensions: Number(rows[0].dimensions),
      storage: rows[0].storage === 'pgvector' ? 'pgvector' : 'array',
    };
    return this.record;
  }

  /** The HNSW cosine index on the side table, with `hnsw`'s build parameters, unless it exists. */
  protected async createHnswIndex(): Promise<void> {
    await this.pool.query(
      `CREATE INDEX IF NOT EXISTS ${EMBEDDING_TABLE}_hnsw ON ${EMBEDDING_TABLE} USING hnsw (embedding vector_cosine_ops)${this.hnswWith}`,
    );
  }

  async prepare(model: string, dimensions: number): Promise<EmbeddingModelRecord> {
    const existing = await this.recorded();
    if (existing) {
      if (existing.model !== model || existing.dimensions !== dimensions) {
        throw new EmbeddingModelMismatchError(existing, { model, dimensions });
      }
      // A dropped HNSW index (to rebuild it with other `hnsw` parameters) is built again here.
      // Looked up first: CREATE INDEX IF NOT EXISTS would lock the table (and need its owner).
      if (existing.storage === 'pgvector') {
        const { rows } = await this.pool.query(`SELECT to_regclass($1) IS NULL AS "missing"`, [
          `${EMBEDDING_TABLE}_hnsw`,
        ]);
        if (rows[0]?.missing) await this.createHnswIndex();
      }
      return existing;
    }
    const storage = await this.chooseStorage();
    const type = storage === 'pgvector' ? `vector(${dimensions})` : 'real[]';
    await this.pool.query(
      `CREATE TABLE IF NOT EXISTS ${EMBEDDING_MODEL_TABLE} (
        id integer PRIMARY KEY CHECK (id = 1),
        model text NOT NULL,
        dimensions integer NOT NULL,
        storage text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())`,
    );
    await this.pool.query(
      `CREATE TABLE IF NOT EXISTS ${EMBEDDING_TABLE} (
        class_name text NOT NULL,
        field text NOT NULL,
        object_id text NOT NULL,
        chunk integer NOT NULL,
        chunk_start integer NOT NULL,
        chunk_end integer NOT NULL,
        source_hash text NOT NULL,
        embedding ${type} NOT NULL,
        embedded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (class_name, field, object_id, chunk))`,
    );
    await this.pool.query(
      `CREATE INDEX IF NOT EXISTS ${EMBEDDING_TABLE}_object ON ${EMBEDDING_TABLE} (class_name, object_id)`,
    );
    if (storage === 'pgvector') await this.createHnswIndex();
    // Two processes preparing at once: the first row wins, and both read it back.
    await this.pool.query(
      `INSERT INTO ${EMBEDDING_MODEL_TABLE} (id, model, dimensions, storage) VALUES (1, $1, $2, $3) ON CONFLICT (id) DO NOTHING`,
      [model, dimensions, storage],
    );
    this.record = undefined;
    const now = await this.recorded();
    if (!now || now.model !== model || now.dimensions !== dimensions) {
      throw new EmbeddingModelMismatchError(now ?? { model: '?', dimensions: 0 }, {
        model,
        dimensions,
      });
    }
    return now;
  }

  protected async chooseStorage(): Promise<EmbeddingModelRecord['storage']> {
    const wanted = this.options.pgvector ?? 'auto';
    if (wanted === 'off') return 'array';
    const { rows } = await this.pool.query(
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS installed,
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available`,
    );
    let installed = rows[0]?.installed === true;
    if (!installed && rows[0]?.available === true) {
      installed = await this.pool
        .query('CREATE EXTENSION IF NOT EXISTS vector')
        .then(() => true)
        .catch(() => false);
    }
    if (installed) return 'pgvector';
    if (wanted === 'on') {
      throw new Error(
        'embeddings storage: pgvector was asked for (pgvector: "on") but the vector extension is neither installed nor available on this PostgreSQL.',
      );
    }
    return 'array';
  }

  async replace(
    className: string,
    objectId: string,
    field: string,
    sourceHash: string,
    chunks: readonly StoredChunk[],
  ): Promise<void> {
    const record = this.record ?? (await this.recorded());
    if (!record) throw new Error('The embedding side table is not prepared; call prepare() first.');
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query(
        `DELETE FROM ${EMBEDDING_TABLE} WHERE class_name = $1 AND field = $2 AND object_id = $3`,
        [className, field, objectId],
      );
      for (const chunk of chunks) {
        if (chunk.vector.length !== record.dimensions) {
          throw new EmbeddingModelMismatchError(record, {
            model: record.model,
            dimensions: chunk.vector.length,
          });
        }
        await client.query(
          `INSERT INTO ${EMBEDDING_TABLE} (class_name, field, object_id, chunk, chunk_start, chunk_end, source_hash, embedding)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::${record.storage === 'pgvector' ? 'vector' : 'real[]'})`,
          [
            className,
            field,
            objectId,
            chunk.index,
            chunk.start,
            chunk.end,
            sourceHash,
            record.storage === 'pgvector' ? vectorLiteral(chunk.vector) : chunk.vector,
          ],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async remove(className: string, objectId: string): Promise<void> {
    if (!(await this.recorded())) return;
    await this.pool.query(
      `DELETE FROM ${EMBEDDING_TABLE} WHERE class_name = $1 AND object_id = $2`,
      [className, objectId],
    );
  }

  async hashes(
    className: string,
    field: string,
    objectIds: readonly string[],
  ): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (!objectIds.length || !(await this.recorded())) return out;
    const { rows } = await this.pool.query(
      `SELECT DISTINCT object_id, source_hash FROM ${EMBEDDING_TABLE}
       WHERE class_name = $1 AND field = $2 AND object_id = ANY($3::text[])`,
      [className, field, [...objectIds]],
    );
    for (const row of rows) out.set(String(row.object_id), String(row.source_hash));
    return out;
  }

  async count(className: string): Promise<number> {
    if (!(await this.recorded())) return 0;
    const { rows } = await this.pool.query(
      `SELECT count(DISTINCT object_id)::int AS n FROM ${EMBEDDING_TABLE} WHERE class_name = $1`,
      [className],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
