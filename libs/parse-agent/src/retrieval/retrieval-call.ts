import { ParseAgentConfigError } from '../core/errors';
import type { EmbeddingProvider } from '../ports/embedding-provider';
import { estimateTokens } from './token-budget';

/** Embedding spend one tool call made: calls, tokens and (when the model has a price) USD. */
export interface EmbeddingCallUsage {
  calls: number;
  tokens: number;
  costUsd?: number;
}

/**
 * Caps embedding spend per tenant over a window: `charge` throws RateLimitExceededError
 * (`rate_limited` with `retryAfter`) when the tenant's tokens in the window would pass the cap.
 */
export interface EmbeddingSpendLimiter {
  charge(tenantKey: string, tokens: number): void | Promise<void>;
}

/** What retrieval runs on, built once from the module options. */
export interface RetrievalServices {
  /** The configured embeddings, or null (semantic_search then says how to configure them). */
  embeddings: EmbeddingProvider | null;
  spendCap?: EmbeddingSpendLimiter;
  /**
   * Parse REST only (no direct database path): the newest rows semantic_search reads and embeds
   * per call (default 500). The result says when the class holds more.
   */
  candidateLimit?: number;
}

/** Rows a bounded (Parse REST) semantic_search reads and embeds per call, by default. */
export const DEFAULT_CANDIDATE_LIMIT = 500;
/** Texts sent to the embeddings per request when candidates are embedded on the fly. */
const EMBED_BATCH = 64;

/** Who a query is charged to: the tenant, else the identity. */
export interface RetrievalCaller {
  readonly tenantId?: string;
  readonly agentId: string;
  readonly permissions: string;
}

/**
 * Retrieval as one tool call sees it: embeds the query text (charging the caller's spend cap
 * first) and adds up what the embeddings cost, for the call's event.
 */
export class RetrievalCall {
  readonly usage: EmbeddingCallUsage = { calls: 0, tokens: 0 };

  constructor(protected readonly services: RetrievalServices) {}

  /** The configured embeddings, or a refusal naming the option to set. */
  get embeddings(): EmbeddingProvider {
    const embeddings = this.services.embeddings;
    if (!embeddings) {
      throw new ParseAgentConfigError(
        'semantic_search needs embeddings: set `embeddings` in ParseAgentModule.forRoot (new LocalLexicalEmbedder() to try it, or an OpenAI-compatible model).',
      );
    }
    return embeddings;
  }

  /** One query's vector. Admin agents are not charged to a tenant's cap. */
  async embedQuery(text: string, caller: RetrievalCaller, signal?: AbortSignal): Promise<number[]> {
    const embeddings = this.embeddings;
    const estimate = estimateTokens(text);
    if (this.services.spendCap && caller.permissions !== 'admin') {
      await this.services.spendCap.charge(caller.tenantId ?? `agent:${caller.agentId}`, estimate);
    }
    const result = await embeddings.embed([text], { signal, purpose: 'query' });
    this.record(embeddings, result.usage.tokens);
    const vector = result.vectors[0];
    if (!Array.isArray(vector) || vector.length !== embeddings.dimensions) {
      throw new ParseAgentConfigError(
        `The embeddings (${embeddings.model}) returned a vector of ${Array.isArray(vector) ? vector.length : 'no'} dimensions; ${embeddings.dimensions} were declared.`,
      );
    }
    return vector;
  }

  /** The bound on rows a Parse REST semantic_search reads and embeds. */
  get candidateLimit(): number {
    const limit = this.services.candidateLimit;
    return Number.isInteger(limit) && limit! > 0 ? limit! : DEFAULT_CANDIDATE_LIMIT;
  }

  /**
   * Vectors of candidate texts (the Parse REST path, which has no stored vectors to read),
   * charged to the caller's spend cap first like a query, in batches.
   */
  async embedTexts(
    texts: readonly string[],
    caller: RetrievalCaller,
    signal?: AbortSignal,
  ): Promise<number[][]> {
    const embeddings = this.embeddings;
    if (this.services.spendCap && caller.permissions !== 'admin' && texts.length) {
      const estimate = texts.reduce((sum, t) => sum + estimateTokens(t), 0);
      await this.services.spendCap.charge(caller.tenantId ?? `agent:${caller.agentId}`, estimate);
    }
    const vectors: number[][] = [];
    for (let i = 0; i < texts.length; i += EMBED_BATCH) {
      signal?.throwIfAborted();
      const batch = texts.slice(i, i + EMBED_BATCH);
      const result = await embeddings.embed(batch, { signal, purpose: 'document' });
      this.record(embeddings, result.usage.tokens);
      if (result.vectors.length !== batch.length) {
        throw new ParseAgentConfigError(
          `The embeddings (${embeddings.model}) returned ${result.vectors.length} vectors for ${batch.length} texts.`,
        );
      }
      vectors.push(...result.vectors);
    }
    return vectors;
  }

  protected record(embeddings: EmbeddingProvider, tokens: number): void {
    this.usage.calls += 1;
    this.usage.tokens += tokens;
    if (embeddings.costPerMillionTokens !== undefined) {
      this.usage.costUsd =
        (this.usage.costUsd ?? 0) + (tokens * embeddings.costPerMillionTokens) / 1_000_000;
    }
  }
}
