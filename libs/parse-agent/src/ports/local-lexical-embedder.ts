import type { EmbedOptions, EmbeddingProvider, EmbeddingResult } from './embedding-provider';

export interface LocalLexicalEmbedderOptions {
  /** Vector length (default 512). More dimensions, fewer hash collisions. */
  dimensions?: number;
  /** Longest word n-gram hashed (default 2: words and adjacent word pairs). */
  maxNgram?: number;
}

/** Words too common to tell two texts apart. */
const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have i in is it its my of on or our so that the this to was we were with you your'.split(
    ' ',
  ),
);

/** FNV-1a, 32 bits: deterministic on every platform, no dependency. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Lower-cased words (letters and digits of any script), stop words left out. */
export function lexicalWords(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => !STOP_WORDS.has(w));
}

/**
 * A LEXICAL embedder that runs in the process: hashed word n-grams (the hashing trick) weighted by
 * 1 + log(term frequency), L2-normalised. Texts that share words score high; synonyms and
 * paraphrases do not (it has no notion of meaning). Deterministic, no network, no model download:
 * for the demo, tests and offline development. For semantic search configure a model
 * (OpenAiCompatibleEmbeddings: OpenAI, Azure, Ollama, LM Studio, vLLM).
 */
export class LocalLexicalEmbedder implements EmbeddingProvider {
  readonly name = 'local-lexical';
  readonly model: string;
  readonly dimensions: number;
  readonly maxBatchSize = 1024;
  protected readonly maxNgram: number;

  constructor(options: LocalLexicalEmbedderOptions = {}) {
    const dimensions = options.dimensions ?? 512;
    if (!Number.isInteger(dimensions) || dimensions < 8 || dimensions > 16_000) {
      throw new RangeError(
        'LocalLexicalEmbedder: dimensions must be a whole number from 8 to 16000.',
      );
    }
    const maxNgram = options.maxNgram ?? 2;
    if (!Number.isInteger(maxNgram) || maxNgram < 1 || maxNgram > 4) {
      throw new RangeError('LocalLexicalEmbedder: maxNgram must be 1, 2, 3 or 4.');
    }
    this.dimensions = dimensions;
    this.maxNgram = maxNgram;
    // The model name carries every setting that changes the vectors.
    this.model = `local-lexical-v1-n${maxNgram}`;
  }

  embed(texts: readonly string[], options: EmbedOptions = {}): Promise<EmbeddingResult> {
    options.signal?.throwIfAborted();
    return Promise.resolve({
      vectors: texts.map((text) => this.vector(text)),
      usage: { tokens: 0 },
    });
  }

  /** One text's vector (synchronous: the embedder does no I/O). */
  vector(text: string): number[] {
    const counts = new Map<string, number>();
    const words = lexicalWords(text);
    for (let n = 1; n <= this.maxNgram; n++) {
      for (let i = 0; i + n <= words.length; i++) {
        const gram = words.slice(i, i + n).join(' ');
        counts.set(gram, (counts.get(gram) ?? 0) + 1);
      }
    }
    const out = new Array<number>(this.dimensions).fill(0);
    for (const [gram, count] of counts) {
      const hash = fnv1a(gram);
      // The top bit picks a sign, so collisions cancel out on average instead of piling up.
      const sign = hash & 0x80000000 ? -1 : 1;
      // Longer n-grams are rarer and more telling: a pair weighs a little more than a word.
      const weight = (1 + Math.log(count)) * (1 + 0.25 * (gram.split(' ').length - 1));
      out[hash % this.dimensions] += sign * weight;
    }
    return normalize(out);
  }
}

/** The vector scaled to length 1 (all zeros stays all zeros: it matches nothing). */
export function normalize(vector: number[]): number[] {
  let sum = 0;
  for (const v of vector) sum += v * v;
  if (sum === 0) return vector;
  const norm = Math.sqrt(sum);
  return vector.map((v) => v / norm);
}
