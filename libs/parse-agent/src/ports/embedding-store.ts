import { ParseAgentConfigError } from '../core/errors';

/**
 * Where chunk vectors live beside the app's rows (a side table in Parse's PostgreSQL database, for
 * one). Written with the application's own authority (the save path, the backfill); agents only
 * ever read it through a data path's `vectorSearch`, under their identity.
 */

/** One embedded chunk of one field of one row. */
export interface StoredChunk {
  index: number;
  start: number;
  end: number;
  vector: number[];
}

/** The model the stored vectors come from, as recorded with them. */
export interface EmbeddingModelRecord {
  model: string;
  dimensions: number;
  /** How vectors are stored: `array` (exact scan in SQL) or `pgvector` (HNSW index, cosine). */
  storage: 'array' | 'pgvector';
}

export interface EmbeddingStore {
  /** What is recorded, or undefined when nothing was stored yet. */
  recorded(): Promise<EmbeddingModelRecord | undefined>;
  /**
   * Creates the store for a model (idempotent). Throws EmbeddingModelMismatchError when vectors
   * of another model or dimension are already stored.
   */
  prepare(model: string, dimensions: number): Promise<EmbeddingModelRecord>;
  /** Replaces the chunks of one field of one row (none: the row's field has no text). */
  replace(
    className: string,
    objectId: string,
    field: string,
    sourceHash: string,
    chunks: readonly StoredChunk[],
  ): Promise<void>;
  /** Forgets every chunk of a row (deleted rows). */
  remove(className: string, objectId: string): Promise<void>;
  /** For each given row that has chunks of `field`: the hash of the text they were made from. */
  hashes(
    className: string,
    field: string,
    objectIds: readonly string[],
  ): Promise<Map<string, string>>;
  /** Rows with chunks of a class (all fields). */
  count(className: string): Promise<number>;
}

/** Injection token for the EmbeddingStore (same name as the interface). */
export const EmbeddingStore = Symbol('EmbeddingStore');

/**
 * The configured embedding model is not the one the stored vectors come from: ranking them
 * together would return confident nonsense, so the application refuses to start instead.
 */
export class EmbeddingModelMismatchError extends ParseAgentConfigError {
  constructor(
    readonly recorded: { model: string; dimensions: number },
    readonly configured: { model: string; dimensions: number },
  ) {
    super(
      `The stored vectors come from ${recorded.model} (${recorded.dimensions} dimensions) but the configured embeddings are ${configured.model} (${configured.dimensions} dimensions). ` +
        `Configure the model the vectors were made with, or re-embed every searchable class with the new one: drop the side tables (parse_agent_embeddings, parse_agent_embedding_model) and run \`parse-agent embed <Class>\`.`,
    );
  }
}
