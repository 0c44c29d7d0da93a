import { ParseAgentConfigError } from '../core/errors';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import type { ModelClass, SearchableDeclaration } from '../metadata/metadata.types';
import type { EmbeddingProvider } from '../ports/embedding-provider';
import type { EmbeddingModelRecord, EmbeddingStore, StoredChunk } from '../ports/embedding-store';
import { chunkText, textHash, type TextChunk } from './chunker';
import type { EmbeddingCallUsage } from './retrieval-call';

/** A row to index: a plain row (`{ objectId, body }`) or a Parse SDK object (`id`, `get()`). */
export type IndexableRow =
  { objectId: string; [field: string]: unknown } | { id: string; get(field: string): unknown };

export interface IndexOptions {
  signal?: AbortSignal;
  /** Skip a field whose text has not changed since it was embedded (default true). */
  skipUnchanged?: boolean;
}

/** What indexing some rows did, and what it cost. */
export interface IndexOutcome extends EmbeddingCallUsage {
  rows: number;
  /** Fields embedded (changed or new). */
  embedded: number;
  /** Fields left as they were (text unchanged). */
  unchanged: number;
  chunks: number;
  /** Fields whose text was longer than `chunk.maxPerDocument` chunks: only its start is searchable. */
  capped: number;
}

/**
 * Keeps the stored chunk vectors of `@AgentSearchable` classes fresh. Call `indexRow` from the
 * save path (an afterSave trigger, a service that saves) and `removeRow` after a delete;
 * `parse-agent embed <Class>` backfills through `indexRows`. Writes with the application's
 * authority: it is never reachable from an agent.
 */
export class SearchIndexer {
  protected prepared?: Promise<EmbeddingModelRecord>;

  constructor(
    protected readonly metadata: MetadataRegistry,
    readonly embeddings: EmbeddingProvider,
    protected readonly store: EmbeddingStore,
  ) {}

  /**
   * Fails when the stored vectors come from another model or dimension
   * (EmbeddingModelMismatchError). Nothing stored yet passes. Run at start-up.
   */
  async verify(): Promise<void> {
    const recorded = await this.store.recorded();
    if (recorded) await this.prepare();
  }

  /** Creates the side table for the configured model, once (fails on a mismatch). */
  prepare(): Promise<EmbeddingModelRecord> {
    this.prepared ??= this.store
      .prepare(this.embeddings.model, this.embeddings.dimensions)
      .catch((error: unknown) => {
        this.prepared = undefined;
        throw error;
      });
    return this.prepared;
  }

  /** The searchable declaration of a class (a model class or its Parse class name). */
  declaration(cls: string | ModelClass): { className: string; searchable: SearchableDeclaration } {
    const className = this.metadata.resolveClassName(cls);
    const searchable = this.metadata.get(className)?.searchable;
    if (!searchable) {
      const known = this.metadata
        .all()
        .filter((m) => m.searchable)
        .map((m) => m.className);
      throw new ParseAgentConfigError(
        `${className} is not @AgentSearchable${known.length ? ` (searchable: ${known.join(', ')})` : ''}; add @AgentSearchable({ fields: [...] }) to its model and register it.`,
      );
    }
    return { className, searchable };
  }

  /** Embeds one row's searchable fields (call after it was saved). */
  indexRow(
    cls: string | ModelClass,
    row: IndexableRow,
    options?: IndexOptions,
  ): Promise<IndexOutcome> {
    return this.indexRows(cls, [row], options);
  }

  /** Forgets a row's chunks (call after it was deleted). */
  async removeRow(cls: string | ModelClass, objectId: string): Promise<void> {
    const { className } = this.declaration(cls);
    await this.store.remove(className, objectId);
  }

  /** Embeds the searchable fields of rows of one class, the texts of all rows in shared batches. */
  async indexRows(
    cls: string | ModelClass,
    rows: readonly IndexableRow[],
    options: IndexOptions = {},
  ): Promise<IndexOutcome> {
    const { className, searchable } = this.declaration(cls);
    await this.prepare();
    const outcome: IndexOutcome = {
      rows: rows.length,
      embedded: 0,
      unchanged: 0,
      chunks: 0,
      capped: 0,
      calls: 0,
      tokens: 0,
    };
    const plain = rows.map(plainRow);
    const work: Array<{ objectId: string; field: string; hash: string; chunks: TextChunk[] }> = [];
    for (const field of searchable.fields) {
      const known =
        options.skipUnchanged === false
          ? new Map<string, string>()
          : await this.store.hashes(
              className,
              field,
              plain.map((r) => r.objectId),
            );
      for (const row of plain) {
        const value = row.values(field);
        const text = typeof value === 'string' ? value : '';
        const hash = textHash(text);
        if (known.get(row.objectId) === hash) {
          outcome.unchanged += 1;
          continue;
        }
        const chunked = chunkText(text, searchable.chunk);
        if (chunked.capped) outcome.capped += 1;
        work.push({ objectId: row.objectId, field, hash, chunks: chunked.chunks });
      }
    }
    const texts = work.flatMap((w) => w.chunks.map((c) => c.text));
    const vectors = await this.embedAll(texts, outcome, options.signal);
    let next = 0;
    for (const w of work) {
      const stored: StoredChunk[] = w.chunks.map((c) => ({
        index: c.index,
        start: c.start,
        end: c.end,
        vector: vectors[next++],
      }));
      await this.store.replace(className, w.objectId, w.field, w.hash, stored);
      outcome.embedded += 1;
      outcome.chunks += stored.length;
    }
    return outcome;
  }

  /** Every text's vector, in batches the provider takes. */
  protected async embedAll(
    texts: readonly string[],
    usage: EmbeddingCallUsage,
    signal?: AbortSignal,
  ): Promise<number[][]> {
    const out: number[][] = [];
    const batch = Math.max(1, this.embeddings.maxBatchSize ?? 64);
    for (let i = 0; i < texts.length; i += batch) {
      const part = texts.slice(i, i + batch);
      const result = await this.embeddings.embed(part, { signal, purpose: 'document' });
      if (result.vectors.length !== part.length) {
        throw new ParseAgentConfigError(
          `The embeddings (${this.embeddings.model}) returned ${result.vectors.length} vectors for ${part.length} texts.`,
        );
      }
      usage.calls += 1;
      usage.tokens += result.usage.tokens;
      if (this.embeddings.costPerMillionTokens !== undefined) {
        usage.costUsd =
          (usage.costUsd ?? 0) +
          (result.usage.tokens * this.embeddings.costPerMillionTokens) / 1_000_000;
      }
      out.push(...result.vectors);
    }
    return out;
  }
}

function plainRow(row: IndexableRow): { objectId: string; values(field: string): unknown } {
  if (typeof (row as { get?: unknown }).get === 'function' && 'id' in row) {
    const object = row as { id: string; get(field: string): unknown };
    if (typeof object.id !== 'string' || !object.id) {
      throw new ParseAgentConfigError('indexRow: save the object first (it has no id yet).');
    }
    return { objectId: object.id, values: (field) => object.get(field) };
  }
  const plain = row as { objectId?: unknown; [field: string]: unknown };
  if (typeof plain.objectId !== 'string' || !plain.objectId) {
    throw new ParseAgentConfigError('indexRow: the row needs its objectId.');
  }
  return { objectId: plain.objectId, values: (field) => plain[field] };
}
