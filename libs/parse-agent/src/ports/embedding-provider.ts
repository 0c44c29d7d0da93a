/**
 * The port between retrieval and an embedding model: texts in, one unit-length vector per text
 * out. A provider never sees who asks; the caller charges spend caps and records usage.
 */

/** What one `embed` call cost, as the provider reported it (or estimated, for local models). */
export interface EmbeddingUsage {
  /** Input tokens the provider counted (0 for the local lexical embedder). */
  tokens: number;
}

export interface EmbeddingResult {
  /** One vector per input text, in input order, each of `dimensions` numbers. */
  vectors: number[][];
  usage: EmbeddingUsage;
}

export interface EmbedOptions {
  /** Aborting cancels the HTTP request. */
  signal?: AbortSignal;
  /** Some models embed queries and documents differently; others ignore it. */
  purpose?: 'query' | 'document';
}

export interface EmbeddingProvider {
  /** Short name for messages and logs: `local-lexical`, `openai-compatible`. */
  readonly name: string;
  /**
   * The model the vectors come from. Recorded beside the stored vectors: vectors of another model
   * (or another dimension) are refused at start-up instead of ranking nonsense.
   */
  readonly model: string;
  /** Length of every vector. */
  readonly dimensions: number;
  /** Most texts one call takes; callers split larger batches. */
  readonly maxBatchSize?: number;
  /** USD per million input tokens, for cost telemetry (absent: cost is not reported). */
  readonly costPerMillionTokens?: number;
  embed(texts: readonly string[], options?: EmbedOptions): Promise<EmbeddingResult>;
}

/** Injection token for an EmbeddingProvider (same name as the interface, as in nestjs/throttler). */
export const EmbeddingProvider = Symbol('EmbeddingProvider');

/** True for an object that implements the EmbeddingProvider port. */
export function isEmbeddingProvider(value: unknown): value is EmbeddingProvider {
  const p = value as Partial<EmbeddingProvider> | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.embed === 'function' &&
    typeof p.model === 'string' &&
    typeof p.dimensions === 'number' &&
    Number.isInteger(p.dimensions) &&
    p.dimensions > 0
  );
}
