import { ParseAgentConfigError } from '../../core/errors';
import type { EmbeddingProvider } from '../../ports/embedding-provider';
import { LocalLexicalEmbedder } from '../../ports/local-lexical-embedder';

/** The environment variables that choose the embeddings of the CLI and the standalone server. */
export const EMBEDDINGS_ENV = {
  provider: 'EMBEDDINGS_PROVIDER',
  model: 'EMBEDDINGS_MODEL',
  dimensions: 'EMBEDDINGS_DIMENSIONS',
  baseURL: 'EMBEDDINGS_BASE_URL',
  apiKey: 'EMBEDDINGS_API_KEY',
  costPerMillionTokens: 'EMBEDDINGS_COST_PER_MILLION_TOKENS',
} as const;

/** Makes an OpenAI-compatible provider; loaded lazily (the `openai` package is an optional peer). */
export type OpenAiCompatibleFactory = (options: {
  model: string;
  dimensions: number;
  baseURL?: string;
  apiKey?: string;
  costPerMillionTokens?: number;
}) => EmbeddingProvider;

/**
 * Embeddings from the environment: `EMBEDDINGS_PROVIDER=local` (the default: the lexical embedder,
 * `EMBEDDINGS_DIMENSIONS` wide, default 512) or `openai-compatible` (`EMBEDDINGS_MODEL`,
 * `EMBEDDINGS_DIMENSIONS`, `EMBEDDINGS_BASE_URL`, `EMBEDDINGS_API_KEY`).
 */
export function embeddingsFromEnv(
  env: Record<string, string | undefined>,
  openAiCompatible?: OpenAiCompatibleFactory,
): EmbeddingProvider {
  const provider = (env[EMBEDDINGS_ENV.provider] ?? 'local').trim() || 'local';
  const dims = env[EMBEDDINGS_ENV.dimensions];
  const dimensions = dims === undefined || dims === '' ? undefined : Number(dims);
  if (dimensions !== undefined && !(Number.isInteger(dimensions) && dimensions > 0)) {
    throw new ParseAgentConfigError(
      `${EMBEDDINGS_ENV.dimensions} must be a positive whole number (got '${dims}').`,
    );
  }
  if (provider === 'local') return new LocalLexicalEmbedder({ dimensions });
  if (provider === 'openai-compatible') {
    const model = env[EMBEDDINGS_ENV.model];
    if (!model || !dimensions) {
      throw new ParseAgentConfigError(
        `${EMBEDDINGS_ENV.provider}=openai-compatible needs ${EMBEDDINGS_ENV.model} and ${EMBEDDINGS_ENV.dimensions} (e.g. text-embedding-3-small and 1536), and ${EMBEDDINGS_ENV.baseURL} for anything but OpenAI.`,
      );
    }
    if (!openAiCompatible) {
      throw new ParseAgentConfigError(
        'openai-compatible embeddings are not available in this build (the openai package is missing).',
      );
    }
    const cost = env[EMBEDDINGS_ENV.costPerMillionTokens];
    return openAiCompatible({
      model,
      dimensions,
      baseURL: env[EMBEDDINGS_ENV.baseURL] || undefined,
      apiKey: env[EMBEDDINGS_ENV.apiKey] || undefined,
      costPerMillionTokens: cost ? Number(cost) : undefined,
    });
  }
  throw new ParseAgentConfigError(
    `${EMBEDDINGS_ENV.provider} must be 'local' or 'openai-compatible' (got '${provider}').`,
  );
}
