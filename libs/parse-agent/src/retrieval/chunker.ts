import type { SearchableChunking } from '../metadata/metadata.types';

/** One chunk of a text: its position and character offsets. */
export interface TextChunk {
  index: number;
  start: number;
  end: number;
  text: string;
}

/** Chunks of a text, and whether the per-document cap left the end of the text out. */
export interface ChunkedText {
  chunks: TextChunk[];
  /** True when `maxPerDocument` stopped the chunking before the end of the text. */
  capped: boolean;
}

/**
 * Fixed-size windows of `size` characters, each starting `size - overlap` after the previous one,
 * ending at a whitespace near the window's end when there is one (so words are not cut), at most
 * `maxPerDocument` of them. Blank text has no chunks.
 */
export function chunkText(text: string, chunking: SearchableChunking): ChunkedText {
  const { size, overlap, maxPerDocument } = chunking;
  const chunks: TextChunk[] = [];
  if (!text.trim()) return { chunks, capped: false };
  let start = 0;
  while (start < text.length) {
    if (chunks.length === maxPerDocument) return { chunks, capped: true };
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      // Back up to a whitespace in the last fifth of the window, if any.
      const floor = start + Math.floor(size * 0.8);
      for (let i = end; i > floor; i--) {
        if (/\s/.test(text[i])) {
          end = i;
          break;
        }
      }
    }
    chunks.push({ index: chunks.length, start, end, text: text.slice(start, end) });
    if (end >= text.length) break;
    let next = Math.max(end - overlap, start + 1);
    // Start the next chunk at a word: skip to just past a whitespace inside the overlap, if any.
    for (let i = next; i < end; i++) {
      if (/\s/.test(text[i])) {
        next = i + 1;
        break;
      }
    }
    start = next;
  }
  return { chunks, capped: false };
}

/** A short, stable hash of a text (FNV-1a 64 as hex): tells a stale chunk from a current one. */
export function textHash(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}
