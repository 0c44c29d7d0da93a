import type { DataRow, VectorSearchChunk } from '../../../ports/data-path';
import { textHash } from '../../../retrieval/chunker';
import { quantizeScore } from '../../../retrieval/score-quantize';
import { applyTokenBudget } from '../../../retrieval/token-budget';

/** One chunk as the result shows it. */
export interface SemanticChunk {
  object_id: string;
  chunk: number;
  score: number;
  content: string;
  /** The field's text changed since it was embedded: content is cut from today's text at the old offsets. */
  stale?: true;
}

export interface SemanticResultInput {
  chunks: readonly VectorSearchChunk[];
  /** Redacted parent rows, documents best first. */
  rows: readonly DataRow[];
  textField: string;
  quantize: boolean;
  maxTotalTokens: number;
}

export interface SemanticResultParts {
  chunks: SemanticChunk[];
  documents: Record<string, DataRow>;
  budget?: { dropped: number; tokens: number };
}

/**
 * Chunks best first with their content cut from the parent row's current text (never from the
 * side table: what an agent reads is what its redacted row holds), trimmed to the token budget
 * from the lowest-ranked end; parent rows once each, in a map, without the text field the chunks
 * already carry. A document whose every chunk the budget dropped is left out of the map too.
 */
export function semanticResult(input: SemanticResultInput): SemanticResultParts {
  const byId = new Map(input.rows.map((row) => [String(row.objectId), row]));
  const ranked: SemanticChunk[] = [];
  const sorted = [...input.chunks].sort(
    (a, b) => b.score - a.score || compare(a.objectId, b.objectId) || a.chunk - b.chunk,
  );
  for (const c of sorted) {
    const row = byId.get(c.objectId);
    const text = row?.[input.textField];
    // A row without the field (redacted, emptied since) shows no chunk of it.
    if (typeof text !== 'string') continue;
    const stale = c.sourceHash !== '' && textHash(text) !== c.sourceHash;
    ranked.push({
      object_id: c.objectId,
      chunk: c.chunk,
      score: input.quantize ? quantizeScore(c.score) : c.score,
      content: text.slice(c.start, c.end),
      ...(stale ? { stale: true as const } : {}),
    });
  }
  const budget = applyTokenBudget(ranked, input.maxTotalTokens, (c) => c.content);
  const documents: Record<string, DataRow> = {};
  for (const c of budget.kept) {
    if (documents[c.object_id]) continue;
    const row = byId.get(c.object_id);
    if (!row) continue;
    const { [input.textField]: _text, ...rest } = row;
    documents[c.object_id] = rest;
  }
  return {
    chunks: budget.kept,
    documents,
    ...(budget.dropped ? { budget: { dropped: budget.dropped, tokens: budget.tokens } } : {}),
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
