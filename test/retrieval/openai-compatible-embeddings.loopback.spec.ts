import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalLexicalEmbedder, ParseAgentConfigError } from 'nestjs-parse-agent';
import { OpenAiCompatibleEmbeddings } from 'nestjs-parse-agent/llm';
import { embeddingsFromEnv } from 'nestjs-parse-agent/client/embeddings/embeddings-from-env';
import { createOpenAiCompatibleEmbeddings } from 'nestjs-parse-agent/client/embeddings/openai-compatible-embeddings';

/**
 * OpenAiCompatibleEmbeddings through the official openai SDK against a LOOPBACK SERVER SPEAKING
 * OpenAI's /v1/embeddings API (no embedding provider can be reached from here). The server
 * answers with unnormalised vectors in shuffled order, and reports usage, as real servers may.
 */
interface Seen {
  path: string;
  auth?: string;
  query: string;
  body: { model: string; input: string[]; dimensions?: number; encoding_format?: string };
}

const DIMS = 24;
const lexical = new LocalLexicalEmbedder({ dimensions: DIMS });

describe('OpenAiCompatibleEmbeddings (loopback server speaking OpenAI /v1/embeddings)', () => {
  let server: Server;
  let baseURL: string;
  const seen: Seen[] = [];
  let answerDims = DIMS;

  beforeAll(async () => {
    server = createServer(async (req: IncomingMessage, res) => {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const url = new URL(req.url ?? '/', 'http://x');
      const body = JSON.parse(raw) as Seen['body'];
      seen.push({ path: url.pathname, auth: req.headers.authorization, query: url.search, body });
      if (url.pathname !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const data = body.input.map((text, index) => ({
        object: 'embedding',
        index,
        // Scaled by 3: the provider must normalise.
        embedding: lexical
          .vector(text)
          .slice(0, answerDims)
          .map((v) => v * 3),
      }));
      data.reverse();
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          object: 'list',
          model: body.model,
          data,
          usage: { prompt_tokens: body.input.length * 5, total_tokens: body.input.length * 5 },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
    answerDims = DIMS;
  });

  it('embeds a batch through /v1/embeddings: vectors in input order, unit length, tokens from usage', async () => {
    const provider = new OpenAiCompatibleEmbeddings({
      model: 'nomic-embed-text',
      dimensions: DIMS,
      baseURL,
      apiKey: 'loopback-key',
      costPerMillionTokens: 10,
    });
    const texts = ['refund my card', 'parcel arrived damaged', 'reset password'];
    const result = await provider.embed(texts, { purpose: 'document' });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      path: '/v1/embeddings',
      auth: 'Bearer loopback-key',
      body: { model: 'nomic-embed-text', input: texts, encoding_format: 'float' },
    });
    expect(seen[0].body.dimensions).toBeUndefined();
    expect(result.usage.tokens).toBe(15);
    result.vectors.forEach((v, i) => {
      expect(Math.hypot(...v)).toBeCloseTo(1, 10);
      const expected = lexical.vector(texts[i]);
      const norm = Math.hypot(...expected);
      v.forEach((x, j) => expect(x).toBeCloseTo(expected[j] / norm, 10));
    });
    expect(provider.costPerMillionTokens).toBe(10);
  });

  it('sends dimensions and Azure-style query and headers when asked', async () => {
    const provider = new OpenAiCompatibleEmbeddings({
      model: 'text-embedding-3-small',
      dimensions: DIMS,
      baseURL,
      apiKey: 'k',
      sendDimensions: true,
      defaultQuery: { 'api-version': '2024-10-21' },
    });
    await provider.embed(['x']);
    expect(seen[0].body.dimensions).toBe(DIMS);
    expect(seen[0].query).toContain('api-version=2024-10-21');
  });

  it('refuses vectors of another length than configured, naming the setting', async () => {
    answerDims = DIMS - 4;
    const provider = new OpenAiCompatibleEmbeddings({
      model: 'm',
      dimensions: DIMS,
      baseURL,
      apiKey: 'k',
      maxRetries: 0,
    });
    await expect(provider.embed(['x'])).rejects.toThrow(ParseAgentConfigError);
    await expect(provider.embed(['x'])).rejects.toThrow(/20 dimensions.*24/);
  });

  it('is what EMBEDDINGS_PROVIDER=openai-compatible builds, and the settings are checked', async () => {
    const provider = embeddingsFromEnv(
      {
        EMBEDDINGS_PROVIDER: 'openai-compatible',
        EMBEDDINGS_MODEL: 'nomic-embed-text',
        EMBEDDINGS_DIMENSIONS: String(DIMS),
        EMBEDDINGS_BASE_URL: baseURL,
        EMBEDDINGS_API_KEY: 'env-key',
      },
      createOpenAiCompatibleEmbeddings,
    );
    await provider.embed(['hello']);
    expect(seen[0].auth).toBe('Bearer env-key');
    expect(embeddingsFromEnv({}).model).toBe('local-lexical-v1-n2');
    expect(() => embeddingsFromEnv({ EMBEDDINGS_PROVIDER: 'openai-compatible' })).toThrow(
      /EMBEDDINGS_MODEL and EMBEDDINGS_DIMENSIONS/,
    );
    expect(() => embeddingsFromEnv({ EMBEDDINGS_PROVIDER: 'magic' })).toThrow(
      /'local' or 'openai-compatible'/,
    );
    expect(() => embeddingsFromEnv({ EMBEDDINGS_DIMENSIONS: 'x' })).toThrow(
      /positive whole number/,
    );
  });
});
