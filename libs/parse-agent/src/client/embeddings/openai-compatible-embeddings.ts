import { ParseAgentConfigError } from '../../core/errors';
import type {
  EmbedOptions,
  EmbeddingProvider,
  EmbeddingResult,
} from '../../ports/embedding-provider';
import { normalize } from '../../ports/local-lexical-embedder';
import { loadOptionalSdk } from '../providers/load-optional-sdk';

export interface OpenAiCompatibleEmbeddingsOptions {
  /** The model name the server knows (`text-embedding-3-small`, `nomic-embed-text`, ...). */
  model: string;
  /** Length of the model's vectors; a server answering another length is refused. */
  dimensions: number;
  /**
   * The server: default OpenAI. Ollama `http://127.0.0.1:11434/v1`, LM Studio
   * `http://127.0.0.1:1234/v1`, vLLM `http://host:8000/v1`, Azure
   * `https://<resource>.openai.azure.com/openai/deployments/<deployment>` (with
   * `defaultQuery: { 'api-version': ... }` and `defaultHeaders: { 'api-key': ... }`).
   */
  baseURL?: string;
  /** Default OPENAI_API_KEY as the SDK reads it; local servers take any value. */
  apiKey?: string;
  defaultHeaders?: Record<string, string>;
  defaultQuery?: Record<string, string>;
  /** Send `dimensions` with each request (OpenAI's text-embedding-3 models shorten vectors). */
  sendDimensions?: boolean;
  /** Texts per request (default 256). */
  maxBatchSize?: number;
  /** USD per million input tokens (cost on tool-call events and in `embed`'s report). */
  costPerMillionTokens?: number;
  /** Request time limit (ms, default 60 000) and retries (default 2), as the SDK takes them. */
  timeoutMs?: number;
  maxRetries?: number;
}

/** What this provider needs of the SDK's client. */
interface EmbeddingsClient {
  embeddings: {
    create(
      body: { model: string; input: string[]; dimensions?: number; encoding_format?: 'float' },
      options?: { signal?: AbortSignal },
    ): Promise<{
      data: Array<{ index: number; embedding: number[] }>;
      usage?: { prompt_tokens?: number; total_tokens?: number };
    }>;
  };
}

type OpenAiConstructor = new (settings: Record<string, unknown>) => EmbeddingsClient;

/**
 * Embeddings from any server speaking OpenAI's `/v1/embeddings` (OpenAI, Azure OpenAI, Ollama,
 * LM Studio, vLLM), through the official `openai` SDK (an optional peer dependency). Vectors are
 * scaled to unit length; tokens come from the server's `usage`.
 */
export class OpenAiCompatibleEmbeddings implements EmbeddingProvider {
  readonly name = 'openai-compatible';
  readonly model: string;
  readonly dimensions: number;
  readonly maxBatchSize: number;
  readonly costPerMillionTokens?: number;
  protected readonly client: EmbeddingsClient;

  constructor(protected readonly options: OpenAiCompatibleEmbeddingsOptions) {
    if (!options.model)
      throw new ParseAgentConfigError('OpenAiCompatibleEmbeddings: model is required.');
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1) {
      throw new ParseAgentConfigError(
        "OpenAiCompatibleEmbeddings: dimensions must be the model's vector length (e.g. 1536).",
      );
    }
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.maxBatchSize = options.maxBatchSize ?? 256;
    this.costPerMillionTokens = options.costPerMillionTokens;
    const sdk = loadOptionalSdk<{ OpenAI: OpenAiConstructor }>(
      'openai',
      'OpenAI-compatible embeddings',
    );
    this.client = new sdk.OpenAI({
      apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'not-needed',
      baseURL: options.baseURL,
      defaultHeaders: options.defaultHeaders,
      defaultQuery: options.defaultQuery,
      timeout: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 2,
    });
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<EmbeddingResult> {
    if (!texts.length) return { vectors: [], usage: { tokens: 0 } };
    const response = await this.client.embeddings.create(
      {
        model: this.model,
        input: [...texts],
        encoding_format: 'float',
        ...(this.options.sendDimensions ? { dimensions: this.dimensions } : {}),
      },
      { signal: options.signal },
    );
    const vectors = new Array<number[]>(texts.length);
    for (const item of response.data ?? []) vectors[item.index] = item.embedding;
    for (let i = 0; i < texts.length; i++) {
      const v = vectors[i];
      if (!Array.isArray(v) || v.length !== this.dimensions) {
        throw new ParseAgentConfigError(
          `The embeddings server answered ${Array.isArray(v) ? `a vector of ${v.length} dimensions` : 'no vector'} for input ${i}; ${this.model} was configured with ${this.dimensions}. Set dimensions to the model's vector length.`,
        );
      }
      vectors[i] = normalize(v.map(Number));
    }
    const tokens = response.usage?.prompt_tokens ?? response.usage?.total_tokens ?? 0;
    return { vectors, usage: { tokens } };
  }
}

/** The factory `embeddingsFromEnv` takes (the CLI's EMBEDDINGS_PROVIDER=openai-compatible). */
export function createOpenAiCompatibleEmbeddings(
  options: OpenAiCompatibleEmbeddingsOptions,
): EmbeddingProvider {
  return new OpenAiCompatibleEmbeddings(options);
}
